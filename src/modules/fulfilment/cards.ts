import { sql } from 'drizzle-orm';
import { builtStatement, type DbOrTx, type Tx } from '../../db/client.js';
import { cardCodes, cardSales, cardServices, orderLines, orders } from '../../db/schema.js';
import { noteStockLevels } from '../inventory/low-stock.js';
import { statusChange, unobserved, type StatusChange, type StatusObserver } from '../orders/events.js';
import { canTransition, ORDER_STATUS, sourcesOf, transitionOrder, type OrderStatus } from '../orders/state.js';

export type CardFulfilment = 'completed' | 'stock_short' | 'noop';

/** Key space of the per-service restock lock (two-int advisory locks never collide with one-bigint ones). */
const RESTOCK_LOCK_SPACE = 7301004;

/** What the assignment statement found and did: the order's status before, and per line what it got. */
type Assignment = { status: OrderStatus; drawn_services: number[] | null; short: boolean };

/**
 * Hands free codes to every line of a card order that is still owed some, in one transaction:
 * all lines full → `completed`, any line short → `stock_short`. Free codes are taken oldest first
 * with SKIP LOCKED, so concurrent fulfilments never wait on each other and never share a code.
 * Idempotent: an order that is complete, refunded or has no new stock to take is left as it is.
 * Two statements whatever the number of lines: the assignment and the status move (with its outbox event);
 * then a low-stock check per service drawn from.
 * `observe` hears of the status change once the transaction has committed.
 */
export async function fulfilCardOrder(db: DbOrTx, orderId: number, observe: StatusObserver = unobserved): Promise<CardFulfilment> {
  const [step] = await db.transaction((tx) => fulfilCardOrdersIn(tx, [orderId]));
  if (step!.change) observe(step!.change);
  return step!.outcome;
}

/** What fulfilling one card order did in a transaction not yet committed: `change` is for its observer after commit. */
export type CardStep = { outcome: CardFulfilment; change: StatusChange | null };

/**
 * Fulfils several card orders in the caller's transaction, each as `fulfilCardOrder` does, and checks the stock of
 * every service drawn from once. Three steps for the whole batch: the assignments, the status moves, the stock
 * checks; the statements of a step are sent without waiting for one another (the driver pipelines them on the
 * transaction's connection), so a batch costs a few round trips, not a few per order. PostgreSQL runs them one after
 * the other, in the order of `orderIds`: an order sees the codes the ones before it took.
 * Results in the order of `orderIds`; nothing is observed here: the caller reports the changes once it has committed.
 */
export async function fulfilCardOrdersIn(tx: Tx, orderIds: number[]): Promise<CardStep[]> {
  const found = await allSettled(orderIds.map((orderId) => assignOwedCodes(tx, orderId)));
  const outcomes = found.map(outcomeOf);
  const moved = await allSettled(
    orderIds.map((orderId, i) => {
      const to = outcomes[i] === 'completed' ? ORDER_STATUS.completed : outcomes[i] === 'stock_short' && found[i]!.status === ORDER_STATUS.initiate ? ORDER_STATUS.stock_short : null;
      return to === null ? null : transitionOrder(tx, orderId, to);
    }),
  );
  // Lowest id first, as any other transaction checking several services does.
  const drawn = [...new Set(found.flatMap((f) => f?.drawn_services ?? []))].sort((a, b) => a - b);
  await allSettled(drawn.map((cardServiceId) => noteStockLevels(tx, cardServiceId)));
  return outcomes.map((outcome, i) => ({ outcome, change: moved[i] ? statusChange(moved[i]) : null }));
}

/** Nothing to do for an order that is not a card order or can no longer complete; else whether a line is short. */
const outcomeOf = (found: Assignment | null): CardFulfilment =>
  !found || !canTransition(found.status, ORDER_STATUS.completed) ? 'noop' : found.short ? 'stock_short' : 'completed';

/**
 * Waits for every statement of a step before failing with the first error: after a failure the transaction is
 * rolled back, and a statement sent after that would run outside it.
 */
async function allSettled<T>(pending: Array<Promise<T> | T>): Promise<T[]> {
  const results = await Promise.allSettled(pending);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * One statement: locks the order (serialising this with refunds and a second run of the same job), gives each
 * owed line up to `codes_owed` free codes of its service, lowers what the lines are owed, and appends the sales
 * (not added to cards.sell_count, so concurrent fulfilments of one card never wait on its row).
 * Nothing is assigned unless the order is a card order that may still complete. Null: no such card order.
 */
const assignment = builtStatement<'orderId'>((slot) => {
  const completable = sql.join(sourcesOf(ORDER_STATUS.completed).map((s) => sql`${s}`), sql`, `);
  return sql`
    with locked as (
      select id, status from ${orders} where id = ${slot('orderId')}::int and kind = 'card' for no key update
    ), owed as (
      select l.id, l.card_service_id, l.codes_owed, s.card_id
      from ${orderLines} l join ${cardServices} s on s.id = l.card_service_id
      join locked on locked.id = l.order_id
      where l.codes_owed > 0 and locked.status in (${completable})
    ), assigned as (
      -- id = any(array(…)): the codes are found through the free-codes index and updated through the primary
      -- key (a join with a CTE of picks was planned as a scan of the whole table).
      update ${cardCodes} c set order_line_id = owed.id, assigned_at = now()
      from owed
      where c.id = any(array(
        select f.id from ${cardCodes} f
        where f.card_service_id = owed.card_service_id and f.order_line_id is null
        order by f.id
        limit owed.codes_owed
        for no key update skip locked))
      returning c.order_line_id as line_id
    ), per_line as (
      select owed.id, owed.card_service_id, owed.card_id, owed.codes_owed, count(assigned.line_id)::int as delivered
      from owed left join assigned on assigned.line_id = owed.id
      group by owed.id, owed.card_service_id, owed.card_id, owed.codes_owed
    ), lowered as (
      update ${orderLines} l set codes_owed = l.codes_owed - per_line.delivered
      from per_line where l.id = per_line.id and per_line.delivered > 0
    ), sold as (
      insert into ${cardSales} (card_id, sold)
      select card_id, sum(delivered)::int from per_line where delivered > 0 group by card_id
    )
    select locked.status,
      (select array_agg(distinct card_service_id) from per_line where delivered > 0) as drawn_services,
      coalesce((select bool_or(codes_owed > delivered) from per_line), false) as short
    from locked`;
});

async function assignOwedCodes(tx: Tx, orderId: number): Promise<Assignment | null> {
  const [row] = await tx.execute<Assignment>(assignment({ orderId }));
  return row ?? null;
}

/** Orders fulfilled per restock transaction: bounds how long one transaction holds its locks. */
const RESTOCK_BATCH = 25;

/**
 * Fulfils the `stock_short` orders waiting for codes of one service, oldest first (C8), one order
 * at a time, until none is left or the stock runs out. Each batch runs in one transaction holding a
 * per-service advisory lock, so two restocks of a service never interleave, and a waiting restock
 * holds one connection only (no pool exhaustion however many queue up). `observe` hears of each batch's
 * status changes once the batch has committed.
 */
export async function restockCardService(
  db: DbOrTx,
  cardServiceId: number,
  observe: StatusObserver = unobserved,
): Promise<{ fulfilledOrders: number }> {
  let fulfilledOrders = 0;
  for (;;) {
    const changes: StatusChange[] = [];
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
        const outcome = await fulfilCardOrder(tx, next.id, (change) => changes.push(change));
        if (outcome === 'completed') fulfilled += 1;
        // Still short of this service's codes: the stock ran out, later orders wait too.
        else if (outcome === 'stock_short' && (await owesCodesOf(tx, next.id, cardServiceId))) return { fulfilled, done: true };
      }
      return { fulfilled, done: false };
    });
    changes.forEach(observe);
    fulfilledOrders += batch.fulfilled;
    if (batch.done) {
      // Codes came in (a restock follows every import): a service back at its threshold may alert again.
      await noteStockLevels(db, cardServiceId);
      return { fulfilledOrders };
    }
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

/**
 * Adds the appended card sales to `cards.sell_count` and removes them, in one statement: a sale is counted
 * exactly once, and sales appended meanwhile wait for the next fold. Returns how many rows it folded.
 */
export async function foldCardSales(db: DbOrTx): Promise<number> {
  const rows = await db.execute<{ folded: number }>(sql`
    with folded as (delete from card_sales returning card_id, sold),
    totals as (select card_id, sum(sold)::int as sold, count(*)::int as n from folded group by card_id),
    counted as (update cards set sell_count = sell_count + totals.sold from totals where cards.id = totals.card_id)
    select coalesce(sum(n), 0)::int as folded from totals`);
  return rows[0]?.folded ?? 0;
}
