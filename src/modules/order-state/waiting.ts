import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { orders, type ProductKind } from '../../db/schema.js';
import { ORDER_STATUS } from './state.js';

/** A top-up's next move is the job of its routing step `routingStep` (its fulfilment job while that is 0). */
export type WaitingOrder = { id: number; utr: string; kind: ProductKind; createdAt: string; routingStep: number };

/** Where a walk through the waiting orders stopped: it goes on after this order. */
export type WaitingCursor = { createdAt: string; id: number } | null;

/**
 * Accepted orders that have not moved on yet and are not with an operator (C8), placed more than
 * `olderThanMs` ago: oldest first, after `cursor`, at most `limit`.
 */
export async function ordersNotMovedOn(
  db: DbOrTx,
  { olderThanMs, cursor, limit }: { olderThanMs: number; cursor: WaitingCursor; limit: number },
): Promise<WaitingOrder[]> {
  const after = cursor ? sql`and (created_at, id) > (${cursor.createdAt}::timestamptz, ${cursor.id})` : sql``;
  return waitingOrders(
    db,
    sql`status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null
      and created_at < now() - ${olderThanMs} * interval '1 millisecond' ${after}`,
    limit,
  );
}

/**
 * Test card orders (C25) waiting `stock_short` for their restock, which is only the job of their routing step (a live
 * order's restock is found by the stock it waits for), whose last move is more than `olderThanMs` ago: oldest first, at
 * most `limit`. Read over the status index: the orders waiting `stock_short`, not the orders ever placed.
 */
export async function testRestocksDue(db: DbOrTx, { olderThanMs, limit }: { olderThanMs: number; limit: number }): Promise<WaitingOrder[]> {
  return waitingOrders(
    db,
    sql`status = ${ORDER_STATUS.stock_short} and not livemode and kind = 'card' and routing_step > 0 and awaiting_operator_since is null
      and updated_at < now() - ${olderThanMs} * interval '1 millisecond'`,
    limit,
  );
}

/** The orders `condition` picks, oldest first, at most `limit`. */
async function waitingOrders(db: DbOrTx, condition: SQL, limit: number): Promise<WaitingOrder[]> {
  // float8: raw SQL reads bigint as text, and job payloads carry numeric ids.
  const rows = await db.execute<{ id: number; utr: string; kind: ProductKind; created_at: string; routing_step: number }>(sql`
    select id::float8 as id, utr, kind, created_at, routing_step
    from ${orders}
    where ${condition}
    order by created_at, id
    limit ${limit}`);
  return rows.map((r) => ({ id: r.id, utr: r.utr, kind: r.kind, createdAt: r.created_at, routingStep: r.routing_step }));
}

/**
 * Per kind, the orders that have not moved on and no operator holds, and the age of the oldest (0 when none), for
 * the alert on orders stuck in `initiate`. A top-up whose provider answered pending or unknown is left out: status
 * queries and callbacks settle it, for up to PROVIDER_SETTLE_HOURS (provider_unsettled_orders counts those), and so
 * is a test order (C25: live metrics only count live orders). Read over
 * the reconciler's partial index, so the count costs the orders waiting, not the orders ever placed.
 */
export async function initiateBacklog(db: DbOrTx): Promise<Array<{ kind: ProductKind; count: number; oldestSeconds: number }>> {
  return db.execute<{ kind: ProductKind; count: number; oldestSeconds: number }>(sql`
    select k.kind, w.count, w.oldest_seconds as "oldestSeconds"
    from (values ('card'), ('top_up')) as k(kind)
    cross join lateral (
      select count(*)::int as count, coalesce(extract(epoch from now() - min(o.created_at)), 0)::float8 as oldest_seconds
      from ${orders} o
      where o.status = ${ORDER_STATUS.initiate} and o.awaiting_operator_since is null and o.kind = k.kind and o.livemode
        and not exists (select 1 from provider_attempts a where a.order_id = o.id and a.outcome in ('pending', 'unknown'))
    ) w`);
}
