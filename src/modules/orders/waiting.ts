import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { orders, type ProductKind } from '../../db/schema.js';
import { ORDER_STATUS } from './state.js';

export type WaitingOrder = { id: number; utr: string; kind: ProductKind; createdAt: string };

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
  // float8: raw SQL reads bigint as text, and job payloads carry numeric ids.
  const rows = await db.execute<{ id: number; utr: string; kind: ProductKind; created_at: string }>(sql`
    select id::float8 as id, utr, kind, created_at from ${orders}
    where status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null
      and created_at < now() - ${olderThanMs} * interval '1 millisecond' ${after}
    order by created_at, id
    limit ${limit}`);
  return rows.map((r) => ({ id: r.id, utr: r.utr, kind: r.kind, createdAt: r.created_at }));
}
