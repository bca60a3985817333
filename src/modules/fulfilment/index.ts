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
import { advanceTopUpOrder, isRouted, type RoutingResult, type SupplierRouting } from '../providers/routing.js';
import { fulfilCardOrder, type CardFulfilment } from './cards.js';
import { fulfilTopUpOrder, type TopUpFulfilment, type TopUpProvider } from './top-ups.js';

export { foldCardSales, restockCardService, servicesReadyToRestock } from './cards.js';
export { refundOrder } from './refunds.js';
export { completeTopUpOrder, handToOperator, topUpProvider } from './top-ups.js';

/**
 * `logger`: the job's own (its lines carry the job and the request that placed the order). `provider`: where top-ups
 * of services without routes go (TOPUP_PROVIDER); `suppliers`: the routing of those with routes (C22).
 */
export type FulfilmentDeps = { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; provider: TopUpProvider; suppliers: SupplierRouting };

export type FulfilmentResult =
  | { kind: 'card'; outcome: CardFulfilment }
  | { kind: 'top_up'; outcome: TopUpFulfilment | RoutingResult }
  /** No such order (its transaction never committed): nothing to do. */
  | { kind: 'missing' };

/** Moves one order on: card orders take codes from inventory, top-up orders go to their providers. */
export async function fulfilOrder(deps: FulfilmentDeps, orderId: number): Promise<FulfilmentResult> {
  const [order] = await deps.db.select({ kind: orders.kind }).from(orders).where(eq(orders.id, orderId));
  if (!order) return { kind: 'missing' };
  if (order.kind === 'card') return { kind: 'card', outcome: await fulfilCardOrder(deps.db, orderId, statusObserver(deps)) };
  if (await isRouted(deps.db, orderId)) return { kind: 'top_up', outcome: await advanceTopUpOrder(deps, orderId) };
  return { kind: 'top_up', outcome: await fulfilTopUpOrder(deps, orderId) };
}
