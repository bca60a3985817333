import { sql } from 'drizzle-orm';
import { builtStatement, type DbOrTx, type Tx } from '../../db/client.js';
import { cardCodes, cardSales, cardServices, orderLines, orders } from '../../db/schema.js';
import { noteStockLevels } from '../inventory/low-stock.js';
import { statusChange, unobserved, type StatusChange, type StatusObserver } from '../orders/events.js';
import { canTransition, ORDER_STATUS, sourcesOf, transitionOrders, type OrderStatus } from '../orders/state.js';

export type CardFulfilment = 'completed' | 'stock_short' | 'noop';

/** Key space of the per-service restock lock (two-int advisory locks never collide with one-bigint ones). */
const RESTOCK_LOCK_SPACE = 7301004;

/** What the assignment statement found and did for one order: its status before, and what its lines got. */
type Assignment = { id: number; status: OrderStatus; drawn_services: number[] | null; short: boolean };

/**
 * Hands free codes to every line of a card order that is still owed some, in one transaction:
 * all lines full → `completed`, any line short → `stock_short`. Free codes are taken oldest first
 * with SKIP LOCKED, so concurrent fulfilments never wait on each other and never share a code.
 * Idempotent: an order that is complete, refunded or has no new stock to take is left as it is.
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
 * Fulfils several card orders in the caller's transaction, each as `fulfilCardOrder` does, in three steps whatever
 * their number: one assignment statement for all of them, one status move per status reached (sent together: the
 * driver pipelines them on the transaction's connection), one stock check of every service drawn from. Codes go to
 * the orders lowest id first, as if fulfilled one after the other in that order.
 * Results in the order of `orderIds`; nothing is observed here: the caller reports the changes once it has committed.
 */
export async function fulfilCardOrdersIn(tx: Tx, orderIds: number[]): Promise<CardStep[]> {
  const found = new Map((await assignment(tx, { orderIds })).map((row) => [row.id, row]));
  const outcomes = new Map(orderIds.map((id) => [id, outcomeOf(found.get(id))]));
  const movingTo = (to: OrderStatus) => orderIds.filter((id) => statusReached(found.get(id), outcomes.get(id)!) === to);
  const moved = (await allSettled([ORDER_STATUS.completed, ORDER_STATUS.stock_short].map((to) => transitionOrders(tx, movingTo(to), to)))).flat();
  const changeOf = new Map(moved.map((row) => [row.id, statusChange(row)]));
  await noteStockLevels(tx, [...new Set([...found.values()].flatMap((f) => f.drawn_services ?? []))]);
  return orderIds.map((id) => ({ outcome: outcomes.get(id)!, change: changeOf.get(id) ?? null }));
}

/** Nothing to do for an order that is not a card order or can no longer complete; else whether a line is short. */
const outcomeOf = (found: Assignment | undefined): CardFulfilment =>
  !found || !canTransition(found.status, ORDER_STATUS.completed) ? 'noop' : found.short ? 'stock_short' : 'completed';

/** The status an outcome moves its order to; none for a `stock_short` order still short, which stays as it is. */
const statusReached = (found: Assignment | undefined, outcome: CardFulfilment): OrderStatus | null =>
  outcome === 'completed'
    ? ORDER_STATUS.completed
    : outcome === 'stock_short' && canTransition(found!.status, ORDER_STATUS.stock_short)
      ? ORDER_STATUS.stock_short
      : null;

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
 * One statement for a set of orders: locks them (lowest id first, serialising this with refunds and a second run of
 * the same job), gives each owed line up to `codes_owed` free codes of its service, lowers what the lines are owed,
 * and appends the sales (not added to cards.sell_count, so concurrent fulfilments of one card never wait on its row).
 * The free codes of each service are taken once for all its lines, oldest first, and dealt out by rank: the lines
 * of lower order ids first, each line the run of codes after those owed before it. Nothing is assigned to an order
 * that is not a card order or can no longer complete. A row per card order found.
 */
const assignment = builtStatement<'orderIds', Assignment>((slot) => {
  const completable = sql.join(sourcesOf(ORDER_STATUS.completed).map((s) => sql`${s}`), sql`, `);
  return sql`
    with locked as (
      select id, status from ${orders} where id = any(${slot('orderIds')}::bigint[]) and kind = 'card' order by id for no key update
    ), owed_lines as (
      -- Locked too, and so read as last committed: the statement's snapshot was taken before it waited for the orders,
      -- and another transaction may have delivered to these lines meanwhile (a restock of another service, a job run
      -- again); their snapshot values would hand a line codes it no longer owes.
      select l.id, l.order_id, l.card_service_id, l.codes_owed
      from ${orderLines} l
      where l.order_id in (select id from locked where status in (${completable})) and l.codes_owed > 0
      order by l.id
      for no key update
    ), owed as (
      select l.id, l.order_id, l.card_service_id, l.codes_owed, s.card_id,
        -- The codes of this service owed to the lines before this one: where this line's run of codes starts.
        coalesce(sum(l.codes_owed) over (partition by l.card_service_id order by l.order_id, l.id
                                         rows between unbounded preceding and 1 preceding), 0) as owed_before
      from owed_lines l join ${cardServices} s on s.id = l.card_service_id
    ), wanted as (
      select card_service_id, sum(codes_owed) as codes from owed group by card_service_id
    ), picked as (
      select f.id, f.card_service_id, row_number() over (partition by f.card_service_id order by f.id) as rank
      from wanted cross join lateral (
        select f.id, f.card_service_id from ${cardCodes} f
        where f.card_service_id = wanted.card_service_id and f.order_line_id is null
        order by f.id
        limit wanted.codes
        for no key update skip locked) f
    ), dealt as (
      -- As two arrays: the update below then reads them as a set of about a hundred rows (unnest), which the planner
      -- joins through the primary key; joined to a CTE, the codes table was scanned whole or probed once per pair.
      select array_agg(picked.id) as code_ids, array_agg(owed.id) as line_ids
      from picked join owed on owed.card_service_id = picked.card_service_id
        and picked.rank > owed.owed_before and picked.rank <= owed.owed_before + owed.codes_owed
    ), assigned as (
      update ${cardCodes} c set order_line_id = deal.line_id, assigned_at = now()
      from unnest((select code_ids from dealt), (select line_ids from dealt)) as deal(code_id, line_id)
      where c.id = deal.code_id
      returning c.order_line_id as line_id
    ), delivered as (
      select line_id, count(*)::int as codes from assigned group by line_id
    ), per_line as (
      select owed.id, owed.order_id, owed.card_service_id, owed.card_id, owed.codes_owed, coalesce(delivered.codes, 0) as delivered
      from owed left join delivered on delivered.line_id = owed.id
    ), lowered as (
      update ${orderLines} l set codes_owed = l.codes_owed - per_line.delivered
      from per_line where l.id = per_line.id and per_line.delivered > 0
    ), sold as (
      insert into ${cardSales} (card_id, sold)
      select card_id, sum(delivered)::int from per_line where delivered > 0 group by card_id
    )
    select locked.id::float8 as id, locked.status,
      (select array_agg(distinct card_service_id) from per_line where per_line.order_id = locked.id and delivered > 0) as drawn_services,
      coalesce((select bool_or(codes_owed > delivered) from per_line where per_line.order_id = locked.id), false) as short
    from locked`;
});

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
      await noteStockLevels(db, [cardServiceId]);
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
