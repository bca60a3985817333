import { sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client.js';
import { cardCodes, cardServices, cards, orderLines, orders } from '../../db/schema.js';
import { canTransition, ORDER_STATUS, transitionOrder, type OrderStatus } from '../orders/state.js';

export type CardFulfilment = 'completed' | 'stock_short' | 'noop';

/** Key space of the per-service restock lock (two-int advisory locks never collide with one-bigint ones). */
const RESTOCK_LOCK_SPACE = 7301004;

/** Raw SQL reads bigint ids as strings; they only go back into SQL. */
type OwedLine = { id: string; card_service_id: number; card_id: number; codes_owed: number };

/**
 * Hands free codes to every line of a card order that is still owed some, in one transaction:
 * all lines full → `completed`, any line short → `stock_short`. Free codes are taken oldest first
 * with SKIP LOCKED, so concurrent fulfilments never wait on each other and never share a code.
 * Idempotent: an order that is complete, refunded or has no new stock to take is left as it is.
 */
export async function fulfilCardOrder(db: DbOrTx, orderId: number): Promise<CardFulfilment> {
  return db.transaction(async (tx) => {
    // The order row lock serialises this with refunds and with a second run of the same job.
    const [order] = await tx.execute<{ status: OrderStatus; kind: string }>(
      sql`select status, kind from ${orders} where id = ${orderId} for no key update`,
    );
    if (!order || order.kind !== 'card') return 'noop';
    if (!canTransition(order.status, ORDER_STATUS.completed)) return 'noop';

    const lines = await tx.execute<OwedLine>(sql`
      select l.id, l.card_service_id, s.card_id, l.codes_owed
      from ${orderLines} l join ${cardServices} s on s.id = l.card_service_id
      where l.order_id = ${orderId} and l.codes_owed > 0
      order by l.id`);
    const soldPerCard = new Map<number, number>();
    let short = false;
    for (const line of lines) {
      const { delivered, owed } = await assignCodes(tx, line);
      if (delivered > 0) soldPerCard.set(line.card_id, (soldPerCard.get(line.card_id) ?? 0) + delivered);
      if (owed > 0) short = true;
    }
    if (!short) await transitionOrder(tx, orderId, ORDER_STATUS.completed);
    else if (order.status === ORDER_STATUS.initiate) await transitionOrder(tx, orderId, ORDER_STATUS.stock_short);
    // Last, so the shared counter rows stay locked only until the commit; ascending card ids keep
    // concurrent fulfilments locking them in the same order.
    for (const [cardId, sold] of [...soldPerCard].sort(([a], [b]) => a - b)) {
      await tx.execute(sql`update ${cards} set sell_count = sell_count + ${sold} where id = ${cardId}`);
    }
    return short ? 'stock_short' : 'completed';
  });
}

/** Assigns up to `codes_owed` free codes of the line's service to it; returns how many and what is still owed. */
async function assignCodes(tx: Tx, line: OwedLine): Promise<{ delivered: number; owed: number }> {
  const [row] = await tx.execute<{ delivered: number; owed: number }>(sql`
    with picked as (
      select id from ${cardCodes}
      where card_service_id = ${line.card_service_id} and order_line_id is null
      order by id
      limit ${line.codes_owed}
      for no key update skip locked
    ), assigned as (
      update ${cardCodes} c set order_line_id = ${line.id}, assigned_at = now()
      from picked where c.id = picked.id
      returning c.id
    ), counted as (select count(*)::int as n from assigned)
    update ${orderLines} set codes_owed = codes_owed - counted.n
    from counted
    where ${orderLines.id} = ${line.id}
    returning counted.n as delivered, ${orderLines.codesOwed} as owed`);
  return row!;
}

/** Orders fulfilled per restock transaction: bounds how long one transaction holds its locks. */
const RESTOCK_BATCH = 25;

/**
 * Fulfils the `stock_short` orders waiting for codes of one service, oldest first (C8), one order
 * at a time, until none is left or the stock runs out. Each batch runs in one transaction holding a
 * per-service advisory lock, so two restocks of a service never interleave, and a waiting restock
 * holds one connection only (no pool exhaustion however many queue up).
 */
export async function restockCardService(db: DbOrTx, cardServiceId: number): Promise<{ fulfilledOrders: number }> {
  let fulfilledOrders = 0;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${RESTOCK_LOCK_SPACE}, ${cardServiceId})`);
      let fulfilled = 0;
      for (let i = 0; i < RESTOCK_BATCH; i += 1) {
        // float8: raw SQL reads bigint as text; ids stay far below 2^53.
        const [next] = await tx.execute<{ id: number }>(sql`
          select o.id::float8 as id from ${orderLines} l join ${orders} o on o.id = l.order_id
          where l.card_service_id = ${cardServiceId} and l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short}
          order by o.created_at, o.id
          limit 1`);
        if (!next) return { fulfilled, done: true };
        const outcome = await fulfilCardOrder(tx, next.id);
        if (outcome === 'completed') fulfilled += 1;
        // Still short of this service's codes: the stock ran out, later orders wait too.
        else if (outcome === 'stock_short' && (await owesCodesOf(tx, next.id, cardServiceId))) return { fulfilled, done: true };
      }
      return { fulfilled, done: false };
    });
    fulfilledOrders += batch.fulfilled;
    if (batch.done) return { fulfilledOrders };
  }
}

async function owesCodesOf(db: DbOrTx, orderId: number, cardServiceId: number): Promise<boolean> {
  const rows = await db.execute(sql`
    select 1 from ${orderLines}
    where order_id = ${orderId} and card_service_id = ${cardServiceId} and codes_owed > 0`);
  return rows.length > 0;
}

/**
 * Card services that have `stock_short` orders waiting and free codes to give them: a restock that
 * was never run (its job lost with Redis, or codes added while the queue was unreachable).
 */
export async function servicesReadyToRestock(db: DbOrTx): Promise<number[]> {
  const rows = await db.execute<{ card_service_id: number }>(sql`
    select distinct l.card_service_id from ${orderLines} l join ${orders} o on o.id = l.order_id
    where l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short}
      and exists (select 1 from ${cardCodes} c where c.card_service_id = l.card_service_id and c.order_line_id is null)`);
  return rows.map((r) => r.card_service_id);
}
