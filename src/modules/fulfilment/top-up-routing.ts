/**
 * The routing rules of DESIGN C22, in one place. A top-up order goes to the providers of its service's routes in
 * route order (a service without routes to the TOPUP_PROVIDER=http provider, when there is one), one at a time:
 * - the next route only after a definite refusal (or a status answer that the provider never received it);
 * - an unknown outcome (a timeout, a cut connection, a 5xx) is settled by status queries with backoff and by
 *   callbacks, never by sending to another provider; unsettled after PROVIDER_SETTLE_HOURS, it waits for an operator;
 * - every route refused → refund; no route left to try → an operator; a provider that is disabled, or whose circuit
 *   is open, is skipped for new orders.
 * Each move goes through the delivery state machine (`order-state/delivery.ts`), which locks the order and refuses what its
 * table does not allow, so a call may run in any process, twice, or beside a callback or an operator: an order is
 * never with two providers at once, and never sent while an attempt may still deliver.
 *
 * A decision that comes back later (a status query due, an open circuit) is the job of the order's next routing step.
 * Only the job of the order's current step goes on (the step is counted in PostgreSQL), so each attempt has one chain
 * of status queries, whatever callbacks, retries and the reconciler start.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { AttemptOutcome, OrderFieldValue } from '../../db/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { refundOrder } from './refunds.js';
import {
  deliveryState,
  handToOperator,
  inFlightFor,
  nextRoutingStep,
  noteOpenOutcome,
  openAttempt,
  OPEN_OUTCOMES,
  settleAttempt,
  withdrawAttempt,
  type AttemptRoute,
} from '../order-state/delivery.js';
import { statusObserver, type StatusObserver } from '../order-state/events.js';
import type { OrderStatus } from '../order-state/state.js';
import type { OwnedStamps } from '../../lib/change-stamps.js';
import type { SupplierOrder } from '../suppliers/adapters/types.js';
import type { Circuits, GuardedOutcome } from '../suppliers/circuits.js';
import { connectionOf, isAvailable, providerRows, routesOf, type ProviderRow } from '../suppliers/connections.js';
import { renderDestination } from '../suppliers/destination.js';

export type SupplierRouting = {
  codeKey: Buffer;
  circuits: Circuits;
  /** Runs `advanceTopUpOrder` for the order again after `delayMs`, as the job of its routing step `step`. */
  scheduleStep: (order: { id: number; utr: string }, step: number, delayMs: number) => Promise<void>;
  settleHours: number;
  /** The first status query's delay; each later one doubles it, up to MAX_SETTLE_DELAY_MS. */
  settleBaseMs: number;
};

export type RoutingDeps = { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; orderPages: Pick<OwnedStamps, 'changed'>; suppliers: SupplierRouting };

export type RoutingResult = 'completed' | 'refunded' | 'awaiting_operator' | 'settling' | 'noop';

const MAX_SETTLE_DELAY_MS = 10 * 60_000;

type RoutedOrder = {
  id: number;
  utr: string;
  status: OrderStatus;
  with_operator: boolean;
  routing_step: number;
  fields: OrderFieldValue[] | null;
  informations: Record<string, string> | null;
  quantity: number;
  top_up_service_id: number;
  age_ms: number;
};

type Attempt = {
  id: number;
  provider_id: number;
  product_code: string;
  base_url: string;
  destination: string | null;
  outcome: AttemptOutcome;
  status_queries: number;
  timeout_ms: number;
  age_ms: number;
};

async function readOrder(db: Db, orderId: number): Promise<RoutedOrder | null> {
  const [order] = await db.execute<RoutedOrder>(sql`
    select o.id::float8 as id, o.utr, o.status, o.awaiting_operator_since is not null as with_operator, o.routing_step,
           o.fields, o.informations, l.quantity, l.top_up_service_id, extract(epoch from now() - o.created_at) * 1000 as age_ms
    from orders o join order_lines l on l.order_id = o.id
    where o.id = ${orderId} and o.kind = 'top_up'
    limit 1`);
  return order ?? null;
}

const attemptsOf = (db: Db, orderId: number) =>
  db.execute<Attempt>(sql`
    select a.id::float8 as id, a.provider_id, a.product_code, coalesce(a.base_url, p.base_url) as base_url, a.destination, a.outcome,
           a.status_queries, coalesce(a.timeout_ms, p.timeout_ms) as timeout_ms, extract(epoch from now() - a.created_at)::float8 * 1000 as age_ms
    from provider_attempts a join providers p on p.id = a.provider_id
    where a.order_id = ${orderId} order by a.id`);

/**
 * Moves a top-up order one step on, as the job of its routing step `step` (0: its fulfilment job). Idempotent; safe to
 * run concurrently. A job whose step is not the order's current one finds nothing to do.
 */
export async function advanceTopUpOrder(deps: RoutingDeps, orderId: number, step: number): Promise<RoutingResult> {
  const { db, suppliers } = deps;
  const observe = statusObserver(deps);
  // Each turn either ends the call or settles an attempt as refused, so there are at most as many turns as routes.
  for (;;) {
    const order = await readOrder(db, orderId);
    if (!order || order.routing_step !== step) return 'noop';
    const attempts = [...(await attemptsOf(db, orderId))];
    const open = attempts.find((attempt) => (OPEN_OUTCOMES as readonly AttemptOutcome[]).includes(attempt.outcome)) ?? null;
    const state = deliveryState(order, open !== null);
    const settleMs = suppliers.settleHours * 3_600_000;

    if (state === 'with_supplier') {
      // The attempt's foreign key keeps its provider (providers are never deleted).
      const provider = (await providerRows(db, sql`p.id = ${open!.provider_id}`))[0]!;
      if (open!.age_ms > settleMs) {
        const handed = await handToOperator(db, order.id, 'overdue', `${provider.name} has not settled the order in ${suppliers.settleHours} h (last outcome: ${open!.outcome}); settle the attempt once the provider has said what became of it.`);
        if (handed) deps.logger.warn({ utr: order.utr, provider: provider.name }, 'top-up attempt overdue: handed to an operator');
        return handed ? 'awaiting_operator' : 'noop';
      }
      // A request that may still be on its way is only asked about once it has surely ended.
      const wait = inFlightFor(open!);
      if (wait > 0) return later(deps, order, wait);
      const outcome = await callProvider(deps, { ...provider, base_url: open!.base_url }, 'status', supplierOrder(order, open!), order.utr);
      const settled = await applyOutcome(deps, order, open!, outcome, observe, 1);
      if (settled !== 'refused') return settled;
      continue;
    }
    if (state !== 'routing') return 'noop';

    const routes = [...(await routesOf(db, order.top_up_service_id))];
    const tried = new Set(attempts.map((attempt) => attempt.provider_id));
    const untried = routes.filter((route) => !tried.has(route.id));
    const next = untried.find(isAvailable);
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
      const reason = routes.length === 0 ? 'The service has no provider routes left.' : 'No active provider is left to deliver this top-up.';
      const handed = await handToOperator(db, order.id, 'hand_over', reason);
      if (handed) deps.logger.warn({ utr: order.utr, reason }, 'top-up handed to an operator');
      return handed ? 'awaiting_operator' : 'noop';
    }

    // The request must leave within the provider's timeout of the attempt being recorded: a status query asks about a
    // `sending` attempt only after that (plus a grace), and a sender held up past it (a pause, a stopped process) must
    // not send after the status query concluded that nothing was sent.
    const sendBy = performance.now() + next.timeout_ms;
    const route: AttemptRoute = {
      provider_id: next.id,
      product_code: next.product_code,
      cost: next.cost,
      base_url: next.base_url,
      destination: next.destination,
      timeout_ms: next.timeout_ms,
    };
    const attempt = await openAttempt(db, order.id, step, route);
    // Another caller moved the order first: it goes on from there.
    if (!attempt) return 'noop';
    const opened = { id: attempt.id, status_queries: 0, ...route };
    const outcome = await callProvider(deps, next, 'send', supplierOrder(order, opened), order.utr, sendBy);
    if (outcome.kind === 'skipped') {
      // This process's circuit for the provider opened meanwhile: nothing was sent, so the attempt never was.
      await withdrawAttempt(db, attempt.id);
      return later(deps, order, suppliers.settleBaseMs);
    }
    const settled = await applyOutcome(deps, order, opened, outcome, observe, 0);
    if (settled !== 'refused') return settled;
  }
}

/** The fields of an order placed before they were kept in the form's order: its labels, taken as text fields. */
export const fieldsOf = (order: Pick<RoutedOrder, 'fields' | 'informations'>): OrderFieldValue[] =>
  order.fields ?? Object.entries(order.informations ?? {}).map(([label, value]) => ({ name: label, label, type: 'text', value }));

const supplierOrder = (order: RoutedOrder, attempt: Pick<Attempt, 'product_code' | 'destination'>): SupplierOrder | { missing: string } => {
  const fields = fieldsOf(order);
  const destination = attempt.destination === null ? { value: null } : renderDestination(attempt.destination, fields);
  if ('missing' in destination) return destination;
  return { reference: order.utr, productCode: attempt.product_code, fields, destination: destination.value, quantity: order.quantity };
};

/**
 * One call to a provider through its circuit, at the address the attempt was made to; credentials are unsealed for this
 * call only. `sendBy` (performance.now()): a send not under way by then is not made, and one under way is cut there.
 * An order whose fields cannot fill the route's destination is refused without a request.
 */
async function callProvider(
  { suppliers, logger }: RoutingDeps,
  provider: ProviderRow & { base_url: string },
  request: 'send' | 'status',
  order: SupplierOrder | { missing: string },
  utr: string,
  sendBy?: number,
): Promise<GuardedOutcome> {
  let outcome: GuardedOutcome;
  if ('missing' in order) {
    outcome = { kind: 'refused', reason: `the order has no ${order.missing} for the route's destination: not sent` };
  } else if (sendBy !== undefined && performance.now() >= sendBy) {
    outcome = { kind: 'refused', reason: 'not sent: the sender was held up past the timeout after recording the attempt' };
  } else {
    outcome = await suppliers.circuits.call({
      provider: { id: provider.id, name: provider.name, timeoutMs: provider.timeout_ms },
      request,
      run: (signal) => {
        const adapter = connectionOf(provider, suppliers.codeKey);
        const bounded = sendBy === undefined ? signal : AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, Math.floor(sendBy - performance.now())))]);
        return request === 'send' ? adapter.send(order, bounded) : adapter.status(order, bounded);
      },
    });
  }
  const detail = 'reason' in outcome ? outcome.reason : undefined;
  logger.info({ utr, provider: provider.name, request, outcome: outcome.kind, ...(detail ? { detail } : {}) }, 'provider attempt');
  return outcome;
}

/**
 * Records what a send (`asked` 0) or a status query (`asked` 1) said about an open attempt. Returns `refused` when the
 * order may go to its next route, else what became of the order; `noop` when another answer settled the attempt first.
 */
async function applyOutcome(
  deps: RoutingDeps,
  order: RoutedOrder,
  attempt: Pick<Attempt, 'id' | 'status_queries'>,
  outcome: GuardedOutcome,
  observe: StatusObserver,
  asked: number,
): Promise<RoutingResult | 'refused'> {
  const { db } = deps;
  if (outcome.kind === 'completed' || outcome.kind === 'refused') {
    const settlement =
      outcome.kind === 'completed' ? { outcome: 'completed' as const, providerReference: outcome.providerReference } : { outcome: 'refused' as const, reason: outcome.reason };
    const settled = await settleAttempt(db, attempt.id, settlement, { by: 'provider', statusQueries: asked });
    if (!settled) return 'noop';
    if (settled.change) observe(settled.change);
    return outcome.kind;
  }
  // pending, unknown, or not asked (the circuit is open): asked again later, with backoff.
  const queries = attempt.status_queries + asked;
  if (outcome.kind !== 'skipped' && !(await noteOpenOutcome(db, attempt.id, outcome, asked))) return 'noop';
  return later(deps, order, Math.min(deps.suppliers.settleBaseMs * 2 ** Math.min(queries, 20), MAX_SETTLE_DELAY_MS));
}

/** Comes back to the order after `delayMs`, as the job of its next routing step; nothing when another job took over. */
async function later(deps: RoutingDeps, order: Pick<RoutedOrder, 'id' | 'utr' | 'routing_step'>, delayMs: number): Promise<'settling' | 'noop'> {
  const step = await nextRoutingStep(deps.db, order.id, order.routing_step);
  if (step === null) return 'noop';
  await deps.suppliers.scheduleStep(order, step, Math.max(0, Math.round(delayMs)));
  return 'settling';
}
