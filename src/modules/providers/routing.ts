/**
 * The routing rules of DESIGN C22, in one place. A top-up order whose service has routes goes to its providers in
 * route order, one at a time, every attempt recorded (`provider_attempts`) before its request leaves:
 * - the next route only after a definite refusal (or a status answer that the provider never received it);
 * - an unknown outcome (a timeout, a cut connection, a 5xx) is settled by status queries with backoff and by
 *   callbacks, never by sending to another provider; unsettled after PROVIDER_SETTLE_HOURS, it waits for an operator;
 * - every route refused → refund; a provider that is disabled, or whose circuit is open, is skipped for new orders.
 * Each call reads the order's state from PostgreSQL and moves it one step on, so calls are idempotent and may run in
 * any process: two callers never both send (one open attempt per order, a unique index), and a decision that came
 * back later (a status query due, an open circuit) is a delayed job named by the order's `routing_step`.
 */
import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import type { AttemptOutcome } from '../../db/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { refundOrder } from '../fulfilment/refunds.js';
import { handToOperator } from '../fulfilment/top-ups.js';
import { statusChange, statusObserver, type StatusObserver } from '../orders/events.js';
import { ORDER_STATUS, transitionOrder } from '../orders/state.js';
import type { SupplierOrder } from './adapters/types.js';
import type { Circuits, GuardedOutcome } from './circuits.js';
import { connectionOf, PROVIDER_COLUMNS, providerRows, type ProviderRow } from './connections.js';
import { routedOrder } from './routed.js';

export type SupplierRouting = {
  codeKey: Buffer;
  circuits: Circuits;
  /** Runs `advanceTopUpOrder` for the order again after `delayMs`, as the job of its routing step `step`. */
  scheduleStep: (order: { id: number; utr: string }, step: number, delayMs: number) => Promise<void>;
  settleHours: number;
  /** The first status query's delay; each later one doubles it, up to MAX_SETTLE_DELAY_MS. */
  settleBaseMs: number;
};

export type RoutingDeps = { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; suppliers: SupplierRouting };

export type RoutingResult = 'completed' | 'refunded' | 'awaiting_operator' | 'settling' | 'noop';

const MAX_SETTLE_DELAY_MS = 10 * 60_000;
/** A `sending` attempt is only asked about once its request has surely ended: the timeout plus this. */
const SENDING_GRACE_MS = 5_000;
const OPEN: AttemptOutcome[] = ['sending', 'pending', 'unknown'];

type RoutedOrder = {
  id: number;
  utr: string;
  status: number;
  with_operator: boolean;
  informations: Record<string, string> | null;
  quantity: number;
  top_up_service_id: number;
  age_ms: number;
};

type Attempt = { id: number; provider_id: number; product_code: string; outcome: AttemptOutcome; status_queries: number; age_ms: number };

type Route = ProviderRow & { product_code: string; cost: string | null; circuit_open: boolean };

/** Whether a top-up order goes through provider routes (see routedOrder). */
export async function isRouted(db: DbOrTx, orderId: number): Promise<boolean> {
  const [row] = await db.execute<{ routed: boolean }>(sql`select ${routedOrder(sql.raw('o'))} as routed from orders o where o.id = ${orderId}`);
  return row?.routed ?? false;
}

async function readOrder(db: Db, orderId: number): Promise<RoutedOrder | null> {
  const [order] = await db.execute<RoutedOrder>(sql`
    select o.id::float8 as id, o.utr, o.status, o.awaiting_operator_since is not null as with_operator, o.informations,
           l.quantity, l.top_up_service_id, extract(epoch from now() - o.created_at) * 1000 as age_ms
    from orders o join order_lines l on l.order_id = o.id
    where o.id = ${orderId} and o.kind = 'top_up'
    limit 1`);
  return order ?? null;
}

const attemptsOf = (db: Db, orderId: number) =>
  db.execute<Attempt>(sql`
    select id::float8 as id, provider_id, product_code, outcome, status_queries, extract(epoch from now() - created_at) * 1000 as age_ms
    from provider_attempts where order_id = ${orderId} order by id`);

const routesOf = (db: Db, topUpServiceId: number) =>
  db.execute<Route>(sql`
    select ${PROVIDER_COLUMNS}, r.product_code, r.cost, coalesce(p.circuit_open_until > now(), false) as circuit_open
    from top_up_routes r join providers p on p.id = r.provider_id
    where r.top_up_service_id = ${topUpServiceId}
    order by r.position`);

/** Moves a routed top-up order one step on (see the rules above). Idempotent; safe to run concurrently. */
export async function advanceTopUpOrder(deps: RoutingDeps, orderId: number): Promise<RoutingResult> {
  const { db, suppliers } = deps;
  const observe = statusObserver(deps);
  // Each turn either ends the call or settles an attempt as refused, so there are at most as many turns as routes.
  for (;;) {
    const order = await readOrder(db, orderId);
    if (!order || order.status !== ORDER_STATUS.initiate || order.with_operator) return 'noop';
    const attempts = [...(await attemptsOf(db, orderId))];
    const open = attempts.find((attempt) => OPEN.includes(attempt.outcome));
    const settleMs = suppliers.settleHours * 3_600_000;

    if (open) {
      // The attempt's foreign key keeps its provider (providers are never deleted).
      const provider = (await providerRows(db, sql`p.id = ${open.provider_id}`))[0]!;
      if (open.age_ms > settleMs) {
        return toOperator(deps, order, `${provider.name} has not settled the order in ${suppliers.settleHours} h (last outcome: ${open.outcome}).`);
      }
      const wait = open.outcome === 'sending' ? provider.timeout_ms + SENDING_GRACE_MS - open.age_ms : 0;
      if (wait > 0) return later(deps, order, wait);
      const outcome = await callProvider(deps, provider, 'status', supplierOrder(order, open.product_code), order.utr);
      const settled = await applyOutcome(deps, order, open, outcome, observe, true);
      if (settled !== 'refused') return settled;
      continue;
    }

    const routes = [...(await routesOf(db, order.top_up_service_id))];
    const tried = new Set(attempts.map((attempt) => attempt.provider_id));
    const untried = routes.filter((route) => !tried.has(route.id));
    const next = untried.find((route) => route.status === 'active' && !route.circuit_open);
    if (!next) {
      if (untried.length === 0 && attempts.length > 0) {
        await refundOrder(db, order.utr, 'No provider could deliver this top-up.', observe);
        deps.logger.info({ utr: order.utr, attempts: attempts.length }, 'every route refused the top-up; refunded');
        return 'refunded';
      }
      if (untried.some((route) => route.status === 'active') && order.age_ms < settleMs) {
        // Only open circuits stand in the way: come back when they may have closed.
        return later(deps, order, suppliers.settleBaseMs * 8);
      }
      return toOperator(deps, order, routes.length === 0 ? 'The service has no provider routes left.' : 'No active provider is left to deliver this top-up.');
    }

    const attempt = await openAttempt(db, order.id, next);
    // Another caller opened an attempt first: it goes on from there.
    if (!attempt) return 'noop';
    const outcome = await callProvider(deps, next, 'send', supplierOrder(order, next.product_code), order.utr);
    if (outcome.kind === 'skipped') {
      // This process's circuit for the provider opened meanwhile: nothing left, so the attempt never was.
      await db.execute(sql`delete from provider_attempts where id = ${attempt.id} and outcome = 'sending'`);
      return later(deps, order, suppliers.settleBaseMs);
    }
    const settled = await applyOutcome(deps, order, attempt, outcome, observe, false);
    if (settled !== 'refused') return settled;
  }
}

const supplierOrder = (order: RoutedOrder, productCode: string): SupplierOrder => ({
  reference: order.utr,
  productCode,
  fields: order.informations ?? {},
  quantity: order.quantity,
});

/** One call to a provider through its circuit; credentials are unsealed for this call only. */
async function callProvider(
  { suppliers, logger }: RoutingDeps,
  provider: ProviderRow,
  request: 'send' | 'status',
  order: SupplierOrder,
  utr: string,
): Promise<GuardedOutcome> {
  const outcome = await suppliers.circuits.call({
    provider: { id: provider.id, name: provider.name, timeoutMs: provider.timeout_ms },
    request,
    run: (signal) => {
      const adapter = connectionOf(provider, suppliers.codeKey);
      return request === 'send' ? adapter.send(order, signal) : adapter.status(order, signal);
    },
  });
  const detail = 'reason' in outcome ? outcome.reason : undefined;
  logger.info({ utr, provider: provider.name, request, outcome: outcome.kind, ...(detail ? { detail } : {}) }, 'provider attempt');
  return outcome;
}

/**
 * Records what a send or a status query said about an open attempt. Returns `refused` when the order may go to
 * its next route, else what became of the order.
 */
async function applyOutcome(
  deps: RoutingDeps,
  order: RoutedOrder,
  attempt: Pick<Attempt, 'id' | 'status_queries'>,
  outcome: GuardedOutcome,
  observe: StatusObserver,
  statusQuery: boolean,
): Promise<RoutingResult | 'refused'> {
  const { db } = deps;
  const asked = statusQuery ? 1 : 0;
  if (outcome.kind === 'completed') return (await completeAttempt(db, attempt.id, outcome.providerReference, observe, deps.logger, asked)) ? 'completed' : 'noop';
  if (outcome.kind === 'refused') return (await refuseAttempt(db, attempt.id, outcome.reason, asked)) ? 'refused' : 'noop';
  // pending, unknown, or not asked (the circuit is open): asked again later, with backoff.
  const queries = attempt.status_queries + asked;
  if (outcome.kind !== 'skipped') {
    await db.execute(sql`
      update provider_attempts set outcome = ${outcome.kind}, status_queries = ${queries}, updated_at = now(),
        detail = ${'reason' in outcome ? outcome.reason : null},
        provider_reference = coalesce(${('providerReference' in outcome && outcome.providerReference) || null}, provider_reference)
      where id = ${attempt.id} and outcome in ('sending', 'pending', 'unknown')`);
  }
  return later(deps, order, Math.min(deps.suppliers.settleBaseMs * 2 ** Math.min(queries, 20), MAX_SETTLE_DELAY_MS));
}

async function openAttempt(db: Db, orderId: number, route: Route): Promise<Pick<Attempt, 'id' | 'status_queries'> | null> {
  const [row] = await db.execute<{ id: number }>(sql`
    insert into provider_attempts (order_id, provider_id, product_code, cost)
    select ${orderId}, ${route.id}, ${route.product_code}, ${route.cost}::numeric
    where exists (select 1 from orders where id = ${orderId} and status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null)
    on conflict do nothing
    returning id::float8 as id`);
  return row ? { id: row.id, status_queries: 0 } : null;
}

/**
 * An attempt (and with it the order) completed, in one transaction; false when it was settled already (a callback
 * and a status query may both bring the news). An order an operator refunded meanwhile stays refunded: logged.
 */
export async function completeAttempt(
  db: Db,
  attemptId: number,
  reference: string | undefined,
  observe: StatusObserver,
  logger: Logger,
  statusQueries = 0,
): Promise<boolean> {
  const change = await db.transaction(async (tx) => {
    const [attempt] = await tx.execute<{ order_id: number }>(sql`
      update provider_attempts set outcome = 'completed', settled_at = now(), updated_at = now(), detail = null,
        status_queries = status_queries + ${statusQueries},
        provider_reference = coalesce(${reference ?? null}, provider_reference)
      where id = ${attemptId} and outcome in ('sending', 'pending', 'unknown')
      returning order_id::float8 as order_id`);
    if (!attempt) return null;
    const moved = await transitionOrder(tx, attempt.order_id, ORDER_STATUS.completed);
    if (!moved) logger.warn({ attemptId }, 'a provider delivered a top-up whose order had already left initiate');
    return moved ? statusChange(moved) : null;
  });
  if (change) observe(change);
  return change !== null;
}

/** An attempt refused for good; false when it was settled already. `statusQueries`: the queries that brought the news. */
export async function refuseAttempt(db: DbOrTx, attemptId: number, reason: string, statusQueries = 0): Promise<boolean> {
  const rows = await db.execute(sql`
    update provider_attempts set outcome = 'refused', detail = ${reason}, settled_at = now(), updated_at = now(),
      status_queries = status_queries + ${statusQueries}
    where id = ${attemptId} and outcome in ('sending', 'pending', 'unknown')
    returning id`);
  return rows.length > 0;
}

/** Comes back to the order after `delayMs`: the next routing step's job. */
async function later(deps: RoutingDeps, order: Pick<RoutedOrder, 'id' | 'utr'>, delayMs: number): Promise<'settling' | 'noop'> {
  const step = await nextStep(deps.db, order.id);
  if (step === null) return 'noop';
  await deps.suppliers.scheduleStep(order, step, Math.max(0, Math.round(delayMs)));
  return 'settling';
}

/** Counts one more routing step of an order still in `initiate` and not with an operator; null otherwise. */
export async function nextStep(db: DbOrTx, orderId: number): Promise<number | null> {
  const [row] = await db.execute<{ routing_step: number }>(sql`
    update orders set routing_step = routing_step + 1, updated_at = now()
    where id = ${orderId} and status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null
    returning routing_step`);
  return row?.routing_step ?? null;
}

async function toOperator(deps: RoutingDeps, order: RoutedOrder, reason: string): Promise<RoutingResult> {
  const handed = await handToOperator(deps.db, order.id, reason);
  if (handed) deps.logger.warn({ utr: order.utr, reason }, 'top-up handed to an operator');
  return handed ? 'awaiting_operator' : 'noop';
}
