import { runPeriodically } from '../src/db/periodic.js';
import type { Tx } from '../src/db/client.js';
import { servicesReadyToRestock, TEST_WAIT_MS } from '../src/modules/fulfilment/index.js';
import { nextRoutingStep, ordersNotMovedOn, testRestocksDue, type WaitingCursor, type WaitingOrder } from '../src/modules/order-state/index.js';
import { routingJobId, scheduleRoutingStep } from '../src/queues/index.js';
import type { Services } from '../src/runtime/services.js';

/** One reconciler run at a time across every worker process. */
const RECONCILER_LOCK = 7301005;

export type ReconcilerOptions = {
  /** Pause between runs. */
  intervalMs?: number;
  /** An `initiate` order younger than this is left to the job its placement enqueued. */
  staleAfterMs?: number;
  /** Orders looked at per run; the next run continues after the last one. */
  batchSize?: number;
};

/**
 * PostgreSQL is the truth, Redis only says what to do next: this timer, run from the worker processes
 * themselves (so it survives Redis losing all its data), gives back to the queues what they lost.
 * - `initiate` orders without a job get one again (jobId = utr, so a job that exists is not doubled).
 *   An order handed to an operator is recorded as such on the order and never looked at (C8): whether a
 *   job still exists says nothing about whether a top-up was sent.
 * - A card order whose job finished without moving it on (failed for good, or completed before the order could
 *   be read) is run again (card fulfilment is internal and idempotent). A top-up whose current routing step has no
 *   live job (Redis lost it, or it finished without moving the order on) gets the next step's job: the routing reads
 *   everything from PostgreSQL and moves the order through the delivery state machine, so running it again asks the
 *   provider that may have the order, and never sends it to another.
 * - Services with `stock_short` orders and free codes get a restock job. A test card order waiting `stock_short` (C25)
 *   whose restock (its routing step's job, due 30 s after its last move) has no live job gets that job again.
 * Jobs are added once the run has committed: a job that ran before would not see the step it is the job of.
 */
export function startReconciler(services: Services, options: ReconcilerOptions = {}) {
  const { intervalMs = 5_000, staleAfterMs = 5_000, batchSize = 500 } = options;
  const { db, queues, logger } = services;
  let cursor: WaitingCursor = null;

  async function requeueOrders(tx: Tx): Promise<{ count: number; afterCommit: () => Promise<void> }> {
    const stale = await ordersNotMovedOn(tx, { olderThanMs: staleAfterMs, cursor, limit: batchSize });
    const last = stale.at(-1);
    cursor = last && stale.length === batchSize ? { createdAt: last.createdAt, id: last.id } : null;
    // An order past its first step is moved on by its routing step's job, not by its fulfilment job.
    const states = await Promise.all(
      stale.map((order) => (order.routingStep > 0 ? queues.routing.getJobState(routingJobId(order.utr, order.routingStep)) : queues.fulfilmentFor(order.id).getJobState(order.utr))),
    );
    const jobless = withoutLiveJob(stale, states);
    const lostCards = jobless.filter(({ order, state }) => order.kind === 'card' && state === 'unknown').map(({ order }) => order);
    const finishedCards = jobless.filter(({ order, state }) => order.kind === 'card' && state !== 'unknown');
    const steps: Array<{ order: WaitingOrder; step: number }> = [];
    for (const { order } of jobless.filter(({ order }) => order.kind === 'top_up')) {
      // Only from the step whose job is gone: a step counted meanwhile has its own job.
      const step = await nextRoutingStep(tx, order.id, order.routingStep);
      if (step !== null) steps.push({ order, step });
    }
    // A test restock is the job of the step the order is at: the same step again, not the next one.
    const restocksDue = await testRestocksDue(tx, { olderThanMs: TEST_WAIT_MS + staleAfterMs, limit: batchSize });
    const restockStates = await Promise.all(restocksDue.map((order) => queues.routing.getJobState(routingJobId(order.utr, order.routingStep))));
    const joblessRestocks = withoutLiveJob(restocksDue, restockStates);
    const lostRestocks = joblessRestocks.filter(({ state }) => state === 'unknown').map(({ order }) => order);
    const finishedRestocks = joblessRestocks.filter(({ state }) => state !== 'unknown');
    const afterCommit = async () => {
      await Promise.all(lostCards.map((order) => queues.addFulfilment({ orderId: order.id, utr: order.utr }, order.utr)));
      for (const { order, state } of finishedCards) await (await queues.fulfilmentFor(order.id).getJob(order.utr))?.retry(state as 'failed' | 'completed');
      for (const { order, step } of steps) await scheduleRoutingStep(queues)(order, step, 0);
      for (const order of lostRestocks) await scheduleRoutingStep(queues)(order, order.routingStep, 0);
      for (const { order, state } of finishedRestocks) await (await queues.routing.getJob(routingJobId(order.utr, order.routingStep)))?.retry(state as 'failed' | 'completed');
    };
    return { count: lostCards.length + finishedCards.length + steps.length + lostRestocks.length + finishedRestocks.length, afterCommit };
  }

  return runPeriodically(
    db,
    { lockKey: RECONCILER_LOCK, intervalMs, onError: (err) => logger.warn({ err }, 'reconciler run failed') },
    async (tx) => {
      const orders = await requeueOrders(tx);
      const restocks = await servicesReadyToRestock(tx);
      return async () => {
        await orders.afterCommit();
        for (const cardServiceId of restocks) {
          // One pending restock per service; a request made while one runs is kept and runs after it.
          await queues.restock.add('restock', { cardServiceId }, { deduplication: { id: `restock-${cardServiceId}`, keepLastIfActive: true } });
        }
        if (orders.count + restocks.length > 0) logger.info({ orders: orders.count, restocks: restocks.length }, 'reconciler re-enqueued work');
      };
    },
  );
}

/** The orders (with their job's state, in the same order) that have no live job: gone with Redis ('unknown'), or finished (failed for good, or done without moving the order on). */
function withoutLiveJob<T>(orders: T[], states: string[]): Array<{ order: T; state: 'unknown' | 'failed' | 'completed' }> {
  return orders.flatMap((order, i) => {
    const state = states[i];
    return state === 'unknown' || state === 'failed' || state === 'completed' ? [{ order, state }] : [];
  });
}
