/**
 * The delivery of a top-up order (DESIGN C22 as amended), beside the order's statuses (state.ts) and as explicit.
 * While a top-up is `initiate` it is in exactly one of these delivery states:
 *
 *   routing           no supplier attempt is open: the routing sends it to its next route, refunds it, or hands it over
 *   with_supplier     an attempt is open (sending, pending, unknown): only that supplier's answer (to the send, a status
 *                     query or a callback) or an operator's settlement of the attempt moves it
 *   supplier_overdue  the open attempt outlived PROVIDER_SETTLE_HOURS: an operator settles it (a late answer still does)
 *   with_operator     nothing is open: an operator completes or refunds it
 *
 * and it ends `delivered` (the order completed) or `refunded`. Every path that moves a top-up (the routing worker,
 * status queries, callbacks, the reconciler, operators through the API or the CLI) locks the order, reads its delivery
 * here and asks DELIVERY_MOVES, in the transaction that makes the move: no two moves of one order interleave, and no
 * path goes around an open attempt (an order that may have been delivered is never refunded, completed by hand or sent
 * to another supplier).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '../../db/client.js';
import type { AttemptOutcome } from '../../db/schema.js';
import { AppError, notFound } from '../../core/errors.js';
import { isoMicros, utcToday } from '../../lib/time.js';
import { statusChange, type StatusChange } from './events.js';
import { ensureTransition, lockOrder, ORDER_STATUS, transitionOrder, type LockedOrder } from './state.js';

export type DeliveryState = 'routing' | 'with_supplier' | 'supplier_overdue' | 'with_operator' | 'delivered' | 'refunded';

/** The only moves a top-up's delivery makes, and the states each may start from. */
export const DELIVERY_MOVES = {
  /** An attempt is recorded (`sending`) before its request leaves. */
  send: { from: ['routing'], to: 'with_supplier' },
  /** The supplier delivered (its answer, a status query, a callback), or an operator settled the attempt so. */
  attempt_completed: { from: ['with_supplier', 'supplier_overdue'], to: 'delivered' },
  /** Nothing was delivered and nothing ever will be (said by the supplier, or by an operator): the next route. */
  attempt_refused: { from: ['with_supplier', 'supplier_overdue'], to: 'routing' },
  /** An attempt whose request never left (this process's circuit for the provider opened meanwhile): as if never made. */
  withdraw: { from: ['with_supplier'], to: 'routing' },
  /** The attempt is still open after PROVIDER_SETTLE_HOURS. */
  overdue: { from: ['with_supplier'], to: 'supplier_overdue' },
  /** No route is left to try: an operator delivers it by hand or refunds it. */
  hand_over: { from: ['routing'], to: 'with_operator' },
  /** An operator marks it delivered. */
  complete: { from: ['routing', 'with_operator'], to: 'delivered' },
  /** Every route refused it, or an operator refunds it. */
  refund: { from: ['routing', 'with_operator'], to: 'refunded' },
} as const satisfies Record<string, { from: readonly DeliveryState[]; to: DeliveryState }>;

export type DeliveryMove = keyof typeof DELIVERY_MOVES;

/** The attempts that may still deliver: at most one per order (a unique index). */
export const OPEN_OUTCOMES = ['sending', 'pending', 'unknown'] as const satisfies readonly AttemptOutcome[];
export type OpenOutcome = (typeof OPEN_OUTCOMES)[number];

/** `timeout_ms`: the provider's timeout when the attempt was made. */
export type OpenAttempt = { id: number; provider_id: number; provider: string; outcome: OpenOutcome; started_at: string; timeout_ms: number; age_ms: number };

/**
 * A `sending` attempt's request leaves within the provider's timeout of the attempt being recorded, or not at all (the
 * routing's sender gives up then): once that and this grace have passed, no request of it can still be on its way.
 */
export const SENDING_GRACE_MS = 5_000;

/** How long a `sending` attempt's request may still be on its way (0: it surely ended). */
export const inFlightFor = (attempt: { outcome: string; timeout_ms: number; age_ms: number }): number =>
  attempt.outcome === 'sending' ? Math.max(0, attempt.timeout_ms + SENDING_GRACE_MS - attempt.age_ms) : 0;

/** A locked top-up order and where its delivery stands. */
export type Delivery = LockedOrder & { state: DeliveryState; open: OpenAttempt | null };

export const canMove = (delivery: Pick<Delivery, 'state'>, move: DeliveryMove): boolean =>
  (DELIVERY_MOVES[move].from as readonly DeliveryState[]).includes(delivery.state);

/** Where a top-up's delivery stands, from its order and whether it has an open attempt. */
export function deliveryState(order: Pick<LockedOrder, 'status' | 'with_operator'>, attemptOpen: boolean): DeliveryState {
  if (order.status === ORDER_STATUS.completed) return 'delivered';
  if (order.status === ORDER_STATUS.refund) return 'refunded';
  if (attemptOpen) return order.with_operator ? 'supplier_overdue' : 'with_supplier';
  return order.with_operator ? 'with_operator' : 'routing';
}

/** An attempt that may still deliver, in SQL: `column` holds its outcome. */
export const isOpenOutcome = (column: SQL) => sql`${column} in ('sending', 'pending', 'unknown')`;

/** The delivery of an order the caller has locked (lockOrder): read after the lock, so it is the last committed. */
export async function deliveryOf(tx: Tx, order: LockedOrder): Promise<Delivery> {
  const [open] = await tx.execute<OpenAttempt>(sql`
    select a.id::float8 as id, a.provider_id, p.name as provider, a.outcome, a.created_at as started_at,
           coalesce(a.timeout_ms, p.timeout_ms) as timeout_ms, extract(epoch from now() - a.created_at)::float8 * 1000 as age_ms
    from provider_attempts a join providers p on p.id = a.provider_id
    where a.order_id = ${order.id} and ${isOpenOutcome(sql`a.outcome`)}`);
  return { ...order, state: deliveryState(order, open !== undefined), open: open ?? null };
}

/** Locks an order (by utr or id) and reads its delivery. */
export const lockDelivery = async (tx: Tx, order: { utr: string } | { id: number }): Promise<Delivery> => deliveryOf(tx, await lockOrder(tx, order));

/** `12:04:31` for a time of today (UTC), `2026-11-26 12:04:31` for an earlier one. */
function sentAt(startedAt: string, now: Date = new Date()): string {
  const iso = isoMicros(startedAt);
  const [day, time] = [iso.slice(0, 10), iso.slice(11, 19)];
  return day === utcToday(now) ? time : `${day} ${time}`;
}

/**
 * Refuses a move the table does not allow (409), saying why: an open attempt is named with its id (the one to settle),
 * provider and when it was sent (`The order has open attempt 42 with provider "Upstream store" (sent 12:04:31); settle it
 * first.`); a finished order is refused as C8 refuses it. Operators' moves go through here, so the messages are the same
 * everywhere.
 */
export function ensureMove(delivery: Delivery, move: DeliveryMove): void {
  if (delivery.kind !== 'top_up') throw new AppError('invalid_transition', 'Only top-up orders are delivered by suppliers.');
  if (canMove(delivery, move)) return;
  const to = DELIVERY_MOVES[move].to;
  if (delivery.state === 'delivered' || delivery.state === 'refunded') {
    ensureTransition(delivery.status, to === 'refunded' ? ORDER_STATUS.refund : to === 'delivered' ? ORDER_STATUS.completed : delivery.status);
  }
  if (delivery.open) {
    const { id, provider, started_at } = delivery.open;
    throw new AppError('invalid_transition', `The order has open attempt ${id} with provider ${JSON.stringify(provider)} (sent ${sentAt(started_at)}); settle it first.`);
  }
  throw new AppError('invalid_transition', 'The order has no open attempt with a provider.');
}

export type AttemptRoute = {
  provider_id: number;
  product_code: string;
  cost: string | null;
  base_url: string;
  destination: string | null;
  timeout_ms: number;
};

/**
 * `send`, by the job of routing step `step`: records a new attempt of the order (`sending`, with the address, product,
 * destination and timeout it goes with) before its request leaves. Null when the order is not routing any more, its
 * routing went on to another step (that step's job sends, so no attempt is ever left without a job), or the provider
 * had it already.
 */
export async function openAttempt(db: Db, orderId: number, step: number, route: AttemptRoute): Promise<{ id: number } | null> {
  return db.transaction(async (tx) => {
    const delivery = await lockDelivery(tx, { id: orderId });
    if (!canMove(delivery, 'send') || delivery.routing_step !== step) return null;
    const [row] = await tx.execute<{ id: number }>(sql`
      insert into provider_attempts (order_id, provider_id, product_code, cost, base_url, destination, timeout_ms)
      values (${orderId}, ${route.provider_id}, ${route.product_code}, ${route.cost}::numeric, ${route.base_url}, ${route.destination},
              ${route.timeout_ms})
      on conflict do nothing
      returning id::float8 as id`);
    return row ?? null;
  });
}

/** What an attempt came to once settled. */
export type Settlement = { outcome: 'completed'; providerReference?: string } | { outcome: 'refused'; reason: string };

/**
 * Who settles: the provider's protocol (an answer to the send, `statusQueries` status queries, a callback), or an
 * operator with a reason, naming the order (`utr`). `reroute`: a refusal counts one more routing step (see nextRoutingStep), for the caller to
 * schedule once committed; the routing worker, which goes on by itself, leaves it.
 */
export type SettledBy = { by: 'provider'; statusQueries?: number; reroute?: boolean } | { by: 'operator'; utr: string; reason: string };

export type Settled = {
  orderId: number;
  utr: string;
  /** The order's status change (completed), for its observer once committed. */
  change: StatusChange | null;
  /** A refusal with `reroute`: the routing step to schedule. */
  step: number | null;
};

/**
 * `attempt_completed` / `attempt_refused`, in one transaction: the attempt is settled (recorded with who and when) and
 * the order moves as the table says: completed → the order is completed (C8); refused → back to routing (the operator
 * flag of an overdue attempt is lifted). Null when the attempt was not open any more (another answer came first); an
 * operator is refused instead (409), as is an attempt that is not the order's open one.
 */
export async function settleAttempt(db: Db, attemptId: number, settlement: Settlement, settledBy: Extract<SettledBy, { by: 'operator' }>): Promise<Settled>;
export async function settleAttempt(db: Db, attemptId: number, settlement: Settlement, settledBy: SettledBy): Promise<Settled | null>;
export async function settleAttempt(db: Db, attemptId: number, settlement: Settlement, settledBy: SettledBy): Promise<Settled | null> {
  return db.transaction(async (tx) => {
    const [attempt] = await tx.execute<{ order_id: number }>(sql`select order_id::float8 as order_id from provider_attempts where id = ${attemptId}`);
    const delivery = attempt ? await lockDelivery(tx, { id: attempt.order_id }) : null;
    // An operator names the order too: an attempt of another order is as unknown as one that does not exist.
    if (!delivery || (settledBy.by === 'operator' && delivery.utr !== settledBy.utr)) {
      throw notFound(settledBy.by === 'operator' ? `provider attempt of order ${settledBy.utr}` : 'provider attempt', 'id', attemptId);
    }
    const move: DeliveryMove = settlement.outcome === 'completed' ? 'attempt_completed' : 'attempt_refused';
    if (delivery.open?.id !== attemptId || !canMove(delivery, move)) {
      if (settledBy.by === 'provider') return null;
      if (delivery.open?.id === attemptId) ensureMove(delivery, move);
      const [settled] = await tx.execute<{ outcome: AttemptOutcome }>(sql`select outcome from provider_attempts where id = ${attemptId}`);
      throw new AppError('invalid_transition', `Attempt ${attemptId} is settled already (${settled!.outcome}).`);
    }
    // An operator's refusal of a request that may still be on its way could send the order to a second supplier.
    const inFlight = settlement.outcome === 'refused' && settledBy.by === 'operator' ? inFlightFor(delivery.open) : 0;
    if (inFlight > 0) {
      const { provider, started_at } = delivery.open;
      throw new AppError(
        'invalid_transition',
        `The request of attempt ${attemptId} may still be on its way to ${JSON.stringify(provider)} (sent ${sentAt(started_at)}); settle it as refused in ${Math.ceil(inFlight / 1000)} s, or as completed now.`,
      );
    }
    const operator = settledBy.by === 'operator' ? settledBy.reason : null;
    const queries = settledBy.by === 'provider' ? (settledBy.statusQueries ?? 0) : 0;
    await tx.execute(sql`
      update provider_attempts set outcome = ${settlement.outcome}, settled_at = now(), updated_at = now(),
        settled_by = ${settledBy.by}, settle_reason = ${operator}, status_queries = status_queries + ${queries},
        detail = ${settlement.outcome === 'refused' ? settlement.reason : null},
        provider_reference = coalesce(${(settlement.outcome === 'completed' && settlement.providerReference) || null}, provider_reference)
      where id = ${attemptId}`);
    if (settlement.outcome === 'completed') {
      const moved = await transitionOrder(tx, delivery.id, ORDER_STATUS.completed, operator === null ? {} : { note: operator });
      return { orderId: delivery.id, utr: delivery.utr, change: moved ? statusChange(moved) : null, step: null };
    }
    if (delivery.with_operator) await tx.execute(sql`update orders set awaiting_operator_since = null, updated_at = now() where id = ${delivery.id}`);
    const reroute = settledBy.by === 'operator' || settledBy.reroute === true;
    return { orderId: delivery.id, utr: delivery.utr, change: null, step: reroute ? await nextRoutingStep(tx, delivery.id) : null };
  });
}

/** `withdraw`: removes an attempt still `sending` whose request never left. */
export async function withdrawAttempt(db: Db, attemptId: number): Promise<void> {
  await db.transaction(async (tx) => {
    const [attempt] = await tx.execute<{ order_id: number }>(sql`select order_id::float8 as order_id from provider_attempts where id = ${attemptId}`);
    if (!attempt) return;
    const delivery = await lockDelivery(tx, { id: attempt.order_id });
    if (delivery.open?.id !== attemptId || delivery.open.outcome !== 'sending' || !canMove(delivery, 'withdraw')) return;
    await tx.execute(sql`delete from provider_attempts where id = ${attemptId}`);
  });
}

/**
 * Records what a send or a status query said of an open attempt that is still open (`pending` or `unknown`): no move,
 * the order stays with its supplier. False when the attempt was settled meanwhile.
 */
export async function noteOpenOutcome(
  db: DbOrTx,
  attemptId: number,
  outcome: { kind: 'pending'; providerReference?: string } | { kind: 'unknown'; reason: string },
  statusQueries: number,
): Promise<boolean> {
  const rows = await db.execute(sql`
    update provider_attempts set outcome = ${outcome.kind}, status_queries = status_queries + ${statusQueries}, updated_at = now(),
      detail = ${outcome.kind === 'unknown' ? outcome.reason : null},
      provider_reference = coalesce(${(outcome.kind === 'pending' && outcome.providerReference) || null}, provider_reference)
    where id = ${attemptId} and ${isOpenOutcome(sql`outcome`)}
    returning id`);
  return rows.length > 0;
}

/**
 * `hand_over` (no route left) or `overdue` (the open attempt outlived PROVIDER_SETTLE_HOURS): the order waits for an
 * operator (C8), with the reason in its note; it is never sent again by itself and the reconciler leaves it alone.
 * False when the order was not where the move starts any more.
 */
export async function handToOperator(db: Db, orderId: number, move: 'hand_over' | 'overdue', reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!canMove(await lockDelivery(tx, { id: orderId }), move)) return false;
    await tx.execute(sql`update orders set awaiting_operator_since = now(), note = ${reason}, updated_at = now() where id = ${orderId}`);
    return true;
  });
}

/**
 * Counts one more routing step of an order whose delivery the routing moves on (routing or with_supplier): the job of
 * that step is then the only one that goes on with it (see the routing's `later`); null when no routing goes on.
 * `from`: only if the order is still at that step (the job of step `from` hands over to the next one).
 */
export async function nextRoutingStep(db: DbOrTx, orderId: number, from?: number): Promise<number | null> {
  const [row] = await db.execute<{ routing_step: number }>(sql`
    update orders set routing_step = routing_step + 1, updated_at = now()
    where id = ${orderId} and status = ${ORDER_STATUS.initiate} and awaiting_operator_since is null
      ${from === undefined ? sql`` : sql`and routing_step = ${from}`}
    returning routing_step`);
  return row?.routing_step ?? null;
}
