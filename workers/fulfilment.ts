import { eq } from 'drizzle-orm';
import { orders } from '../src/db/schema.js';
import type { Services } from '../src/services.js';
import { fulfilCardOrder, type CardFulfilment } from '../src/modules/fulfilment/service.js';
import { fulfilTopUpOrder, type TopUpFulfilment } from '../src/modules/fulfilment/top-up.js';
import type { FulfilmentJob } from '../src/queues/index.js';

export type FulfilmentResult =
  | { kind: 'card'; outcome: CardFulfilment }
  | { kind: 'top_up'; outcome: TopUpFulfilment }
  /** No such order (its transaction never committed): nothing to do. */
  | { kind: 'missing' };

/** Moves one order on: card orders take codes from inventory, top-up orders go to the provider. */
export async function fulfilOrder(services: Services, { orderId }: FulfilmentJob): Promise<FulfilmentResult> {
  const [order] = await services.db.select({ kind: orders.kind }).from(orders).where(eq(orders.id, orderId));
  if (!order) return { kind: 'missing' };
  if (order.kind === 'card') return { kind: 'card', outcome: await fulfilCardOrder(services.db, orderId) };
  return { kind: 'top_up', outcome: await fulfilTopUpOrder(services, orderId) };
}
