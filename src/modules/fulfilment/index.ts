/**
 * Fulfilment, as the rest of the service sees it: moving an order on (card codes from inventory, top-ups to
 * their provider), restocks, refunds and an operator's completion. Workers and operator tools come through here.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { orders } from '../../db/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { statusObserver } from '../orders/events.js';
import { fulfilCardOrder, type CardFulfilment } from './cards.js';
import { fulfilTopUpOrder, type TopUpFulfilment, type TopUpProvider } from './top-ups.js';

export { foldCardSales, restockCardService, servicesReadyToRestock } from './cards.js';
export { refundOrder } from './refunds.js';
export { completeTopUpOrder, handToOperator, topUpProvider } from './top-ups.js';

/** `logger`: the job's own (its lines carry the job and the request that placed the order). */
export type FulfilmentDeps = { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; provider: TopUpProvider };

export type FulfilmentResult =
  | { kind: 'card'; outcome: CardFulfilment }
  | { kind: 'top_up'; outcome: TopUpFulfilment }
  /** No such order (its transaction never committed): nothing to do. */
  | { kind: 'missing' };

/** Moves one order on: card orders take codes from inventory, top-up orders go to their provider. */
export async function fulfilOrder(deps: FulfilmentDeps, orderId: number): Promise<FulfilmentResult> {
  const [order] = await deps.db.select({ kind: orders.kind }).from(orders).where(eq(orders.id, orderId));
  if (!order) return { kind: 'missing' };
  if (order.kind === 'card') return { kind: 'card', outcome: await fulfilCardOrder(deps.db, orderId, statusObserver(deps)) };
  return { kind: 'top_up', outcome: await fulfilTopUpOrder(deps, orderId) };
}
