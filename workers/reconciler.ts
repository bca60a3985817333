import { runPeriodically } from '../src/db/periodic.js';
import type { Tx } from '../src/db/client.js';
import { handToOperator, servicesReadyToRestock } from '../src/modules/fulfilment/index.js';
import { ordersNotMovedOn, type WaitingCursor } from '../src/modules/orders/index.js';
import { nextStep } from '../src/modules/providers/index.js';
import { routingJobId, scheduleRoutingStep } from '../src/queues/index.js';
import type { Services } from '../src/services.js';

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
 *   be read) is run again (card fulfilment is internal and idempotent); such a top-up is handed to an operator,
 *   unless it goes through provider routes (C22): then its routing runs again, which is safe by construction.
 * - Services with `stock_short` orders and free codes get a restock job.
 */
export function startReconciler(services: Services, options: ReconcilerOptions = {}) {
  const { intervalMs = 5_000, staleAfterMs = 5_000, batchSize = 500 } = options;
  const { db, queues, logger } = services;
  let cursor: WaitingCursor = null;

  async function requeueOrders(tx: Tx): Promise<number> {
    const stale = await ordersNotMovedOn(tx, { olderThanMs: staleAfterMs, cursor, limit: batchSize });
    const last = stale.at(-1);
    cursor = last && stale.length === batchSize ? { createdAt: last.createdAt, id: last.id } : null;
    // A routed top-up past its first step is moved on by its routing step's job, not by its fulfilment job.
    const states = await Promise.all(
      stale.map((order) => (order.routingStep > 0 ? queues.routing.getJobState(routingJobId(order.utr, order.routingStep)) : queues.fulfilment.getJobState(order.utr))),
    );
    // A routed order that no job will move on (Redis lost it, or it finished without moving the order) is routed again.
    const stuck = stale.filter((order, i) => order.routed && (states[i] === 'unknown' || states[i] === 'failed' || states[i] === 'completed'));
    // Routing reads everything from PostgreSQL and records each attempt before its request leaves, so running a
    // step again is safe: it asks the provider that may have the order, never sends it to another.
    for (const order of stuck) {
      const step = await nextStep(tx, order.id);
      if (step !== null) await scheduleRoutingStep(queues)(order, step, 0);
    }
    const lost = stale.filter((order, i) => !order.routed && states[i] === 'unknown');
    if (lost.length) {
      await queues.fulfilment.addBulk(
        lost.map((order) => ({ name: 'fulfil', data: { orderId: order.id, utr: order.utr }, opts: { jobId: order.utr } })),
      );
    }
    // A job that finished (failed for good, or done without moving the order on) left the order where it was.
    const finished = stale.flatMap((order, i) => {
      const state = states[i];
      return !order.routed && (state === 'failed' || state === 'completed') ? [{ order, state }] : [];
    });
    for (const { order, state } of finished) {
      if (order.kind === 'card') await (await queues.fulfilment.getJob(order.utr))?.retry(state);
      else await handToOperator(tx, order.id, 'Delivery did not finish; waiting for an operator.');
    }
    return stuck.length + lost.length + finished.length;
  }

  async function requeueRestocks(tx: Tx): Promise<number> {
    const waiting = await servicesReadyToRestock(tx);
    for (const cardServiceId of waiting) {
      // One pending restock per service; a request made while one runs is kept and runs after it.
      await queues.restock.add(
        'restock',
        { cardServiceId },
        { deduplication: { id: `restock-${cardServiceId}`, keepLastIfActive: true } },
      );
    }
    return waiting.length;
  }

  return runPeriodically(
    db,
    { lockKey: RECONCILER_LOCK, intervalMs, onError: (err) => logger.warn({ err }, 'reconciler run failed') },
    async (tx) => {
      const orders = await requeueOrders(tx);
      const restocks = await requeueRestocks(tx);
      if (orders + restocks > 0) logger.info({ orders, restocks }, 'reconciler re-enqueued work');
    },
  );
}
