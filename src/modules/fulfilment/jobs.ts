/** Moving orders on in batches: what the fulfilment queue's worker runs for its jobs. */
import { eq, sql } from 'drizzle-orm';
import { builtStatement, type Db } from '../../db/client.js';
import { orders, type ProductKind } from '../../db/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { statusObserver } from '../order-state/events.js';
import type { OwnedStamps } from '../../lib/change-stamps.js';
import { advanceTopUpOrder, type RoutingResult, type SupplierRouting } from './top-up-routing.js';
import { batcher, type BatchOptions } from '../../lib/batch.js';
import { fulfilCardOrder, fulfilCardOrdersIn, type CardFulfilment } from './cards.js';
import { advanceTestOrder, type TestOutcome } from './test-mode.js';

/** `logger`: the job's own (its lines carry the job and the request that placed the order). `suppliers`: the routing of top-ups (C22). */
type FulfilmentDeps = { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; orderPages: Pick<OwnedStamps, 'changed'>; suppliers: SupplierRouting };

export type FulfilmentResult =
  | { kind: 'card'; outcome: CardFulfilment }
  | { kind: 'top_up'; outcome: RoutingResult }
  /** A test order (C25), moved on by the test rules. */
  | { kind: 'test'; outcome: TestOutcome }
  /** No such order (its transaction never committed): nothing to do. */
  | { kind: 'missing' };

/** A live card order (or a missing one) in a transaction of its own; null for any other order, left untouched. */
async function fulfilIfCard(deps: FulfilmentDeps, orderId: number): Promise<FulfilmentResult | null> {
  const [order] = await deps.db.select({ kind: orders.kind, livemode: orders.livemode }).from(orders).where(eq(orders.id, orderId));
  if (!order) return { kind: 'missing' };
  if (order.kind === 'card' && order.livemode) return { kind: 'card', outcome: await fulfilCardOrder(deps.db, orderId, statusObserver(deps)) };
  return null;
}

/**
 * Moves an order on as the job of its routing step `step` (0: its fulfilment job): a live top-up goes to its
 * providers, a test order (C25) to the test rules. Card orders' codes come from the batch (see batchedFulfilment).
 */
export async function advanceOrder(deps: FulfilmentDeps, orderId: number, step: number): Promise<FulfilmentResult> {
  const [order] = await deps.db.select({ livemode: orders.livemode }).from(orders).where(eq(orders.id, orderId));
  if (!order) return { kind: 'missing' };
  if (order.livemode) return { kind: 'top_up', outcome: await advanceTopUpOrder(deps, orderId, step) };
  const { db, suppliers } = deps;
  const outcome = await advanceTestOrder({ db, codeKey: suppliers.codeKey, observe: statusObserver(deps), scheduleStep: suppliers.scheduleStep }, orderId, step);
  return { kind: 'test', outcome };
}

/**
 * Card orders per batch transaction, and batch transactions at once per process (see `batchedFulfilment`). Two at once:
 * with one, the worker waited for each commit and PostgreSQL for the worker, both well under their core (47% and 65%
 * draining a backlog); with two, the drain went from about 1,000 to 1,430 orders/s.
 */
export const FULFILMENT_BATCH: BatchOptions = { maxSize: 32, inFlight: 3 };

type BatchItem = { orderId: number; logger: Logger };

/** The kind of each order of a batch, and whether it is live, in one statement (ids that are not there are missing orders). */
const kindsStatement = builtStatement<'ids', { id: number; kind: ProductKind; livemode: boolean }>(
  (slot) => sql`select id::float8 as id, kind, livemode from ${orders} where id = any(${slot('ids')}::bigint[])`,
);

/**
 * Moves orders on for a worker that runs many jobs at once (card orders take codes from inventory, top-up orders go to
 * their providers): card orders whose jobs arrive while a batch transaction
 * is in flight go together in the next one (group commit), so a busy worker pays one begin and one commit for
 * several orders; a lone order goes at once. The batch reads the kinds of its orders in one statement and fulfils
 * its card orders as `fulfilCardOrder` does (`fulfilCardOrdersIn`): the same SKIP LOCKED assignment, status move
 * and outbox event per order. Each job gets its own order's result, and its status change is reported on its own
 * logger once the batch has committed. Top-up orders and test orders (C25) leave the batch untouched and take their own path, each job
 * alone, at most `topUpsAtOnce` at a time. A batch transaction that fails commits nothing: its orders are then
 * fulfilled each in a transaction of its own, so a bad order fails its own job only (a batch of one fails its job at
 * once). `deps.logger` says when a batch fell back.
 */
export function batchedFulfilment(
  deps: FulfilmentDeps,
  { batch = FULFILMENT_BATCH, topUpsAtOnce }: { batch?: BatchOptions; topUpsAtOnce: number },
): (logger: Logger, orderId: number) => Promise<FulfilmentResult> {
  const cards = batcher<BatchItem, FulfilmentResult | null>(async (items) => {
    try {
      return await fulfilBatch(deps, items);
    } catch (err) {
      // A lone order's own transaction failed: its job fails (and is retried), as without batching.
      if (items.length === 1) throw err;
      deps.logger.warn({ err, orders: items.length }, 'batch fulfilment failed: each order of it goes alone');
      // One after the other: a batch's worth of transactions at once would take most of the pool.
      const results: PromiseSettledResult<FulfilmentResult | null>[] = [];
      for (const item of items) results.push(...(await Promise.allSettled([fulfilIfCard({ ...deps, logger: item.logger }, item.orderId)])));
      return results;
    }
  }, batch);
  // Batches of one: at most `topUpsAtOnce` top-ups hold a connection (and wait on a provider) at a time.
  const topUps = batcher<BatchItem, FulfilmentResult>(
    ([item]) => Promise.allSettled([advanceOrder({ ...deps, logger: item!.logger }, item!.orderId, 0)]),
    { maxSize: 1, inFlight: topUpsAtOnce },
  );
  return async (logger, orderId) => (await cards({ orderId, logger })) ?? (await topUps({ orderId, logger }));
}

async function fulfilBatch(deps: FulfilmentDeps, items: BatchItem[]): Promise<PromiseSettledResult<FulfilmentResult | null>[]> {
  const { kinds, stepOf } = await deps.db.transaction(async (tx) => {
    const rows = await kindsStatement(tx, { ids: items.map((item) => item.orderId) });
    // A test card order (C25) leaves the batch like a top-up: the test rules move it, never the stock.
    const kinds = new Map(rows.map((row) => [row.id, row.livemode ? row.kind : ('test' as const)]));
    // Lowest id first, so two batches lock their orders in the same order. A restock takes its orders oldest first
    // and may deadlock with a batch: PostgreSQL aborts one, and a batch that fails goes again order by order.
    const cardIds = [...new Set(items.map((item) => item.orderId).filter((id) => kinds.get(id) === 'card'))].sort((a, b) => a - b);
    const steps = await fulfilCardOrdersIn(tx, cardIds);
    return { kinds, stepOf: new Map(cardIds.map((id, i) => [id, steps[i]!])) };
  });
  return items.map((item): PromiseSettledResult<FulfilmentResult | null> => {
    const kind = kinds.get(item.orderId);
    if (kind !== 'card') return { status: 'fulfilled', value: kind === undefined ? { kind: 'missing' } : null };
    // The same order twice in a batch (a job run again while the first run waits): the second finds nothing to do.
    const step = stepOf.get(item.orderId) ?? { outcome: 'noop', change: null };
    stepOf.delete(item.orderId);
    if (step.change) statusObserver({ ...deps, logger: item.logger })(step.change);
    return { status: 'fulfilled', value: { kind: 'card', outcome: step.outcome } };
  });
}
