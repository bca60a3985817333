import { sql } from 'drizzle-orm';
import { builtStatement, type DbOrTx, type Tx } from '../../db/client.js';
import { cardCodes, cardSales, cardServices, orderLines, orders } from '../../db/schema.js';
import { noteStockLevels } from '../inventory/low-stock.js';
import { statusChange, unobserved, type StatusChange, type StatusObserver } from '../order-state/events.js';
import { canTransition, ORDER_STATUS, sourcesOf, transitionOrders, type OrderStatus } from '../order-state/state.js';

export type CardFulfilment = 'completed' | 'stock_short' | 'noop';

/** Key space of the per-service assignment lock (two-int advisory locks never collide with one-bigint ones). */
const ASSIGNMENT_LOCK_SPACE = 7301004;

/** What the assignment statement found and did for one order: its status before, and the services its lines got codes of, or were left short of. */
type Assignment = { id: number; utr: string; account_id: number; status: OrderStatus; drawn_services: number[] | null; short_services: number[] | null };

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

/**
 * What fulfilling one card order did in a transaction not yet committed: `change` is for its observer after commit
 * (its status move, or the codes given to an order that stays `stock_short`).
 */
export type CardStep = { outcome: CardFulfilment; change: StatusChange | null };

/**
 * Fulfils several card orders in the caller's transaction, each as `fulfilCardOrder` does, in four steps whatever
 * their number: the assignment locks of the services they are owed codes of, one assignment statement for all of them, one
 * status move per status reached (sent together: the driver pipelines them on the transaction's connection), one
 * stock check of every service drawn from. Codes go to the orders oldest first (creation time, then id), as if
 * fulfilled one after the other in that order, and never past an older order of the same service that waits
 * `stock_short` (C8: restocks serve the waiting orders oldest first): such a line gets none and waits behind it.
 * Results in the order of `orderIds`; nothing is observed here: the caller reports the changes once it has committed.
 */
export async function fulfilCardOrdersIn(tx: Tx, orderIds: number[]): Promise<CardStep[]> {
  const found = new Map((await assigned(tx, orderIds)).map((row) => [row.id, row]));
  const outcomes = new Map(orderIds.map((id) => [id, outcomeOf(found.get(id))]));
  const movingTo = (to: OrderStatus) => orderIds.filter((id) => statusReached(found.get(id), outcomes.get(id)!) === to);
  const moved = (await allSettled([ORDER_STATUS.completed, ORDER_STATUS.stock_short].map((to) => transitionOrders(tx, movingTo(to), to)))).flat();
  const changeOf = new Map(moved.map((row) => [row.id, statusChange(row)]));
  await noteStockLevels(tx, [...new Set([...found.values()].flatMap((f) => f.drawn_services ?? []))]);
  return orderIds.map((id) => ({ outcome: outcomes.get(id)!, change: changeOf.get(id) ?? codesGiven(found.get(id)) }));
}

/** An order given codes without a status move (it stays `stock_short`): a change of its entry, not of its status. */
const codesGiven = (found: Assignment | undefined): StatusChange | null =>
  found?.drawn_services
    ? { utr: found.utr, accountId: found.account_id, kind: 'card', from: found.status, to: found.status, mode: 'live' }
    : null;

/**
 * The assignment under the services' locks, taken before it takes its snapshot (its own statement, pipelined) so that
 * it sees what the assignment before it committed. Optimistic: a service where no order waits is locked shared, on a
 * savepoint; should a line of it end short after all (the codes ran out), the assignment is rolled back and made again
 * with that service locked exclusive, after the batches dealing beside it, so an order left short and a newer one served
 * never overlap.
 */
async function assigned(tx: Tx, orderIds: number[]): Promise<Assignment[]> {
  type Locks = Awaited<ReturnType<typeof lockServices>>;
  // Each turn locks one more service exclusive at least, so there are at most as many turns as services.
  for (let exclusive: number[] = []; ; ) {
    // Pipelined, and through the driver all three, so that they leave (and run) in this order.
    const [, locks, rows] = (await allSettled<unknown>([
      savepoint(tx, {}),
      lockServices(tx, { orderIds, exclusive }),
      assignment(tx, { orderIds }),
    ])) as [unknown, Locks, Assignment[]];
    const shared = new Set(locks.filter((lock) => !lock.exclusive).map((lock) => lock.card_service_id));
    const runOut = [...new Set(rows.flatMap((row) => row.short_services ?? []).filter((id) => shared.has(id)))];
    if (runOut.length === 0) return rows;
    await backToSavepoint(tx, {});
    exclusive = [...exclusive, ...runOut];
  }
}

const savepoint = builtStatement<never>(() => sql`savepoint assignment`);
const backToSavepoint = builtStatement<never>(() => sql`rollback to savepoint assignment`);

/** Nothing to do for an order that is not a card order or can no longer complete; else whether a line is short. */
const outcomeOf = (found: Assignment | undefined): CardFulfilment =>
  !found || !canTransition(found.status, ORDER_STATUS.completed) ? 'noop' : found.short_services ? 'stock_short' : 'completed';

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
 * The per-service assignment locks (transaction-scoped advisory locks) of every service the orders are owed codes of,
 * taken in service order, so that two transactions taking several never wait on each other in a circle. Exclusive for
 * a service whose orders wait stock_short (a restock's own among them), or that `exclusive` names: there assignments
 * take turns, so the waiting orders are served oldest first whatever runs beside them. Shared for the others: batches
 * deal their codes side by side (SKIP LOCKED keeps them apart), which is most of fulfilment's throughput. A row per
 * service, with the mode it took.
 */
const lockServices = builtStatement<'orderIds' | 'exclusive', { card_service_id: number; exclusive: boolean }>(
  (slot) => sql`
  select s.id as card_service_id, s.exclusive,
    (case when s.exclusive then pg_advisory_xact_lock(${ASSIGNMENT_LOCK_SPACE}, s.id)
          else pg_advisory_xact_lock_shared(${ASSIGNMENT_LOCK_SPACE}, s.id) end)::text = '' as locked
  from (
    select owed.id,
      owed.id = any(${slot('exclusive')}::int[])
      or exists (select 1 from ${orderLines} w where w.card_service_id = owed.id and w.codes_owed > 0 and w.waiting) as exclusive
    from (select distinct card_service_id as id from ${orderLines}
          where order_id = any(${slot('orderIds')}::bigint[]) and codes_owed > 0 and card_service_id is not null) owed
    order by owed.id
  ) s`,
);

/**
 * One statement for a set of orders: locks them (lowest id first, serialising this with refunds and a second run of
 * the same job), gives each owed line up to `codes_owed` free codes of its service, lowers what the lines are owed,
 * and appends the sales (not added to cards.sell_count, so concurrent fulfilments of one card never wait on its row).
 * The free codes of each service are taken once for all its lines, oldest first, and dealt out by rank: the lines
 * of older orders first (creation time, then id), each line the run of codes after those owed before it. A line gets
 * none while an order of its service placed before it, and not among these, waits `stock_short`. Nothing is assigned
 * to an order that is not a card order or can no longer complete. A row per card order found.
 */
const assignment = builtStatement<'orderIds', Assignment>((slot) => {
  const completable = sql.join(sourcesOf(ORDER_STATUS.completed).map((s) => sql`${s}`), sql`, `);
  return sql`
    with locked as (
      -- Live card orders only: a test order never takes a code from stock (C25; its callers leave it out too).
      select id, utr, account_id, status, created_at from ${orders} where id = any(${slot('orderIds')}::bigint[]) and kind = 'card' and livemode order by id for no key update
    ), owed_lines as (
      -- Locked too, and so read as last committed: the statement's snapshot was taken before it waited for the orders,
      -- and another transaction may have delivered to these lines meanwhile (a restock of another service, a job run
      -- again); their snapshot values would hand a line codes it no longer owes.
      select l.id, l.order_id, l.card_service_id, l.codes_owed
      from ${orderLines} l
      where l.order_id in (select id from locked where status in (${completable})) and l.codes_owed > 0
      order by l.id
      for no key update
    ), waiting as (
      -- Per service, the oldest order that waits stock_short for its codes, apart from these (order_lines_waiting_idx:
      -- never the lines of a backlog still to be fulfilled).
      select distinct on (w.card_service_id) w.card_service_id, o.created_at, o.id
      from ${orderLines} w join ${orders} o on o.id = w.order_id
      where w.waiting and w.codes_owed > 0 and w.card_service_id in (select card_service_id from owed_lines)
        and o.status = ${ORDER_STATUS.stock_short} and o.livemode and o.id <> all(${slot('orderIds')}::bigint[])
      order by w.card_service_id, o.created_at, o.id
    ), owed as (
      select l.id, l.order_id, l.card_service_id, l.codes_owed, s.card_id,
        -- The codes of this service owed to the lines before this one: where this line's run of codes starts.
        coalesce(sum(l.codes_owed) over (partition by l.card_service_id order by o.created_at, l.order_id, l.id
                                         rows between unbounded preceding and 1 preceding), 0) as owed_before
      from owed_lines l
      join locked o on o.id = l.order_id
      join ${cardServices} s on s.id = l.card_service_id
      left join waiting w on w.card_service_id = l.card_service_id
      -- Behind an older waiting order: nothing now; the restock serves that one first, then this one.
      where w.id is null or (w.created_at, w.id) > (o.created_at, o.id)
    ), wanted as (
      -- after_id: the newest stock code the service has given out (card_codes_taken_idx). Its free codes are read from
      -- there: every code taken leaves an entry in the index of free codes until card_codes is vacuumed, and a walk
      -- from the index's start steps over all of them (it grew from 2 to 17 ms a batch over 110,000 codes taken).
      select card_service_id, sum(codes_owed) as codes,
        coalesce((select max(t.id) from ${cardCodes} t
                  where t.card_service_id = owed.card_service_id and t.order_line_id is not null and t.livemode), 0) as after_id
      from owed group by card_service_id
    ), picked_after as (
      select f.id, f.card_service_id
      from wanted cross join lateral (
        select f.id, f.card_service_id from ${cardCodes} f
        where f.card_service_id = wanted.card_service_id and f.order_line_id is null and f.id > wanted.after_id
        order by f.id
        limit wanted.codes
        for no key update skip locked) f
    ), picked_before as (
      -- A free code before the newest taken one: one an assignment beside this one skipped, then rolled back. Read
      -- only when the codes after run short (a limit of 0 reads nothing), so every free code is dealt in the end.
      select f.id, f.card_service_id
      from wanted cross join lateral (
        select f.id, f.card_service_id from ${cardCodes} f
        where f.card_service_id = wanted.card_service_id and f.order_line_id is null and f.id < wanted.after_id
        order by f.id
        limit wanted.codes - (select count(*) from picked_after p where p.card_service_id = wanted.card_service_id)
        for no key update skip locked) f
    ), picked as (
      select p.id, p.card_service_id, row_number() over (partition by p.card_service_id order by p.id) as rank
      from (select * from picked_after union all select * from picked_before) p
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
      -- Every owed line, those behind a waiting order too (they get nothing, and leave their order short).
      select l.id, l.order_id, l.card_service_id, s.card_id, l.codes_owed, coalesce(delivered.codes, 0) as delivered
      from owed_lines l join ${cardServices} s on s.id = l.card_service_id left join delivered on delivered.line_id = l.id
    ), lowered as (
      -- A line still owed once dealt waits (its order goes, or stays, stock_short), and newer orders wait behind it.
      update ${orderLines} l set codes_owed = l.codes_owed - per_line.delivered, waiting = per_line.codes_owed > per_line.delivered
      from per_line where l.id = per_line.id and (per_line.delivered > 0 or not l.waiting)
    ), sold as (
      insert into ${cardSales} (card_id, sold)
      select card_id, sum(delivered)::int from per_line where delivered > 0 group by card_id
    )
    select locked.id::float8 as id, locked.utr, locked.account_id, locked.status,
      (select array_agg(distinct card_service_id) from per_line where per_line.order_id = locked.id and delivered > 0) as drawn_services,
      (select array_agg(distinct card_service_id) from per_line where per_line.order_id = locked.id and codes_owed > delivered) as short_services
    from locked`;
});

/** Waiting orders fulfilled per restock transaction: bounds how long one transaction holds its locks. */
const RESTOCK_BATCH = 25;

/**
 * Fulfils the `stock_short` orders waiting for codes of one service, oldest first (C8), until none is left or the
 * stock runs out: each transaction takes the next RESTOCK_BATCH of them and fulfils them as one batch
 * (`fulfilCardOrdersIn`: the service's codes dealt oldest order first, under the service's assignment lock, so a
 * restock and the fulfilment of new orders never interleave). A restock holds one connection however many queue up.
 * Test orders (C25) are never served from stock: the test rules restock them. `observe` hears of each batch's status changes once the batch has committed.
 */
export async function restockCardService(
  db: DbOrTx,
  cardServiceId: number,
  observe: StatusObserver = unobserved,
): Promise<{ fulfilledOrders: number }> {
  let fulfilledOrders = 0;
  for (;;) {
    const { steps, done } = await db.transaction(async (tx) => {
      // float8: raw SQL reads bigint as text; ids stay far below 2^53.
      const waiting = await tx.execute<{ id: number }>(sql`
        select o.id::float8 as id from ${orders} o
        where o.status = ${ORDER_STATUS.stock_short} and o.livemode
          and exists (select 1 from ${orderLines} l where l.order_id = o.id and l.card_service_id = ${cardServiceId} and l.codes_owed > 0)
        order by o.created_at, o.id
        limit ${RESTOCK_BATCH}`);
      const ids = waiting.map((row) => row.id);
      if (ids.length === 0) return { steps: [], done: true };
      const steps = await fulfilCardOrdersIn(tx, ids);
      // An order still short of this service's codes: the stock ran out, later orders wait too. Otherwise the next
      // transaction looks again: an order may have started waiting meanwhile (its fulfilment found this one waiting).
      return { steps, done: await owesCodesOf(tx, ids, cardServiceId) };
    });
    for (const step of steps) if (step.change) observe(step.change);
    fulfilledOrders += steps.filter((step) => step.outcome === 'completed').length;
    if (done) {
      // Codes came in (a restock follows every import): a service back at its threshold may alert again.
      await noteStockLevels(db, [cardServiceId]);
      return { fulfilledOrders };
    }
  }
}

async function owesCodesOf(db: DbOrTx, orderIds: number[], cardServiceId: number): Promise<boolean> {
  const rows = await db.execute(sql`
    select 1 from ${orderLines}
    where order_id = any(${sql.param(orderIds)}::bigint[]) and card_service_id = ${cardServiceId} and codes_owed > 0
    limit 1`);
  return rows.length > 0;
}

/**
 * Card services that have `stock_short` orders waiting and free codes to give them: a restock that
 * was never run (its job lost with Redis, or codes added while the queue was unreachable).
 */
export async function servicesReadyToRestock(db: DbOrTx): Promise<number[]> {
  const rows = await db.execute<{ card_service_id: number }>(sql`
    select distinct l.card_service_id from ${orderLines} l join ${orders} o on o.id = l.order_id
    where l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short} and o.livemode
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
