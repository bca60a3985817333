import { sql } from 'drizzle-orm';
import { runPeriodically } from '../src/db/periodic.js';
import type { Tx } from '../src/db/client.js';
import { cardCodes, orderLines, orders } from '../src/db/schema.js';
import type { Services } from '../src/services.js';
import { handToOperator } from '../src/modules/fulfilment/top-up.js';
import { ORDER_STATUS } from '../src/modules/orders/state.js';

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

type StaleOrder = { id: number; utr: string; kind: string; created_at: string };

/**
 * PostgreSQL is the truth, Redis only says what to do next: this timer, run from the worker processes
 * themselves (so it survives Redis losing all its data), gives back to the queues what they lost.
 * - `initiate` orders without a job get one again (jobId = utr, so a job that exists is not doubled).
 *   An order handed to an operator is recorded as such on the order and never looked at (C8): whether a
 *   job still exists says nothing about whether a top-up was sent.
 * - A card order whose job failed for good is retried (card fulfilment is internal and idempotent); a
 *   top-up whose job failed for good is handed to an operator.
 * - Services with `stock_short` orders and free codes get a restock job.
 */
export function startReconciler(services: Services, options: ReconcilerOptions = {}) {
  const { intervalMs = 5_000, staleAfterMs = 5_000, batchSize = 500 } = options;
  const { db, queues, logger } = services;
  let cursor: { createdAt: string; id: number } | null = null;

  async function requeueOrders(tx: Tx): Promise<number> {
    const after = cursor ? sql`and (created_at, id) > (${cursor.createdAt}::timestamptz, ${cursor.id})` : sql``;
    // float8: raw SQL reads bigint as text, and job payloads carry numeric ids.
    const stale = await tx.execute<StaleOrder>(sql`
      select id::float8 as id, utr, kind, created_at from ${orders}
      where status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null and created_at < now() - ${staleAfterMs} * interval '1 millisecond' ${after}
      order by created_at, id
      limit ${batchSize}`);
    const last = stale.at(-1);
    cursor = last && stale.length === batchSize ? { createdAt: last.created_at, id: last.id } : null;
    const states = await Promise.all(stale.map((order) => queues.fulfilment.getJobState(order.utr)));
    const lost = stale.filter((_, i) => states[i] === 'unknown');
    if (lost.length) {
      await queues.fulfilment.addBulk(
        lost.map((order) => ({ name: 'fulfil', data: { orderId: order.id, utr: order.utr }, opts: { jobId: order.utr } })),
      );
    }
    const failed = stale.filter((_, i) => states[i] === 'failed');
    for (const order of failed) {
      if (order.kind === 'card') await (await queues.fulfilment.getJob(order.utr))?.retry('failed');
      else await handToOperator(tx, order.id, 'Delivery failed; waiting for an operator.');
    }
    return lost.length + failed.length;
  }

  async function requeueRestocks(tx: Tx): Promise<number> {
    const waiting = await tx.execute<{ card_service_id: number }>(sql`
      select distinct l.card_service_id from ${orderLines} l join ${orders} o on o.id = l.order_id
      where l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short}
        and exists (select 1 from ${cardCodes} c where c.card_service_id = l.card_service_id and c.order_line_id is null)`);
    for (const { card_service_id: cardServiceId } of waiting) {
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
