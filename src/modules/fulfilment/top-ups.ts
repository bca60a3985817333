import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import { orderLines, orders, topUps, topUpServices } from '../../db/schema.js';
import type { Config } from '../../env.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { hmacSha256 } from '../../lib/crypto.js';
import { DEFAULT_JOB_OPTIONS } from '../../queues/index.js';
import { AppError } from '../../errors.js';
import { statusChange, statusObserver, unobserved, type StatusObserver } from '../orders/events.js';
import { ensureTransition, ORDER_STATUS, sourcesOf, transitionOrder, type OrderStatus } from '../orders/state.js';
import { lockOrder, refundOrder } from './refunds.js';

/** What a fulfilment provider is told about a top-up order: ids and labels, never secrets. */
export type TopUpRequest = {
  utr: string;
  top_up: { id: number; name: string };
  service: { id: number; name: string; quantity: number };
  informations: Record<string, string>;
  amount: string;
  currency: string;
};

/** `completed`: delivered; `refused`: the provider will never deliver it; `pending`: an operator finishes it. */
export type ProviderOutcome = { kind: 'completed' } | { kind: 'refused'; reason: string } | { kind: 'pending' };

export type TopUpProvider = { send: (request: TopUpRequest) => Promise<ProviderOutcome> };

/** Thrown for answers worth retrying (network errors, 5xx, 408, 429): the queue retries with backoff. */
export class ProviderUnavailableError extends Error {}

/** The order stays `initiate` until an operator completes or refunds it (POST /admin/orders/:utr/complete). */
export const manualProvider: TopUpProvider = { send: async () => ({ kind: 'pending' }) };

/**
 * POSTs the order as JSON, signed with `X-Signature: sha256=<hex HMAC-SHA256(secret, body)>`.
 * `X-Timestamp` (unix seconds) lets the provider refuse stale deliveries; `Idempotency-Key` is the utr,
 * the same on every retry, so a provider never tops up twice for one order (C8).
 */
export function httpProvider(url: string, secret: string, timeoutMs = 10_000): TopUpProvider {
  return {
    send: async (request) => {
      const body = JSON.stringify(request);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-Signature': `sha256=${hmacSha256(secret, body).toString('hex')}`,
            'X-Timestamp': String(Math.floor(Date.now() / 1000)),
            'Idempotency-Key': request.utr,
          },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new ProviderUnavailableError(`top-up provider unreachable: ${err instanceof Error ? err.message : String(err)}`);
      }
      const text = (await response.text()).slice(0, 500);
      if (response.ok) return { kind: 'completed' };
      if (response.status >= 500 || response.status === 408 || response.status === 429) {
        throw new ProviderUnavailableError(`top-up provider answered ${response.status}`);
      }
      return { kind: 'refused', reason: `Refused by the top-up provider (${response.status})${text ? `: ${text}` : ''}` };
    },
  };
}

export function topUpProvider(config: Config): TopUpProvider {
  if (config.TOPUP_PROVIDER === 'http') return httpProvider(config.TOPUP_PROVIDER_URL!, config.TOPUP_PROVIDER_SECRET!);
  return manualProvider;
}

/**
 * Counts one more delivery of a top-up order that is still `initiate` and not handed to an operator, and
 * reads what the provider is told; null when there is nothing to send.
 */
async function claimDelivery(db: Db, orderId: number): Promise<{ attempts: number; request: TopUpRequest } | null> {
  const [claimed] = await db
    .update(orders)
    .set({ deliveryAttempts: sql`${orders.deliveryAttempts} + 1`, updatedAt: sql`now()` })
    .where(
      and(
        eq(orders.id, orderId),
        eq(orders.kind, 'top_up'),
        inArray(orders.status, sourcesOf(ORDER_STATUS.completed)),
        isNull(orders.awaitingOperatorSince),
      ),
    )
    .returning({ attempts: orders.deliveryAttempts });
  if (!claimed) return null;
  const [row] = await db
    .select({
      utr: orders.utr,
      total: orders.total,
      currency: orders.currency,
      informations: orders.informations,
      topUpId: topUps.id,
      topUpName: topUps.name,
      serviceId: topUpServices.id,
      serviceName: topUpServices.name,
      quantity: orderLines.quantity,
    })
    .from(orders)
    .innerJoin(orderLines, eq(orderLines.orderId, orders.id))
    .innerJoin(topUpServices, eq(topUpServices.id, orderLines.topUpServiceId))
    .innerJoin(topUps, eq(topUps.id, topUpServices.topUpId))
    .where(eq(orders.id, orderId))
    .limit(1);
  if (!row) return null;
  return {
    attempts: claimed.attempts,
    request: {
      utr: row.utr,
      top_up: { id: row.topUpId, name: row.topUpName },
      service: { id: row.serviceId, name: row.serviceName, quantity: row.quantity },
      informations: row.informations ?? {},
      amount: row.total,
      currency: row.currency,
    },
  };
}

/**
 * Records on the order that it waits for an operator (C8): it is never sent again by itself, and the
 * reconciler leaves it alone. Returns whether this call handed it over.
 */
export async function handToOperator(db: DbOrTx, orderId: number, reason: string): Promise<boolean> {
  const rows = await db
    .update(orders)
    .set({ awaitingOperatorSince: sql`now()`, note: reason, updatedAt: sql`now()` })
    .where(and(eq(orders.id, orderId), inArray(orders.status, sourcesOf(ORDER_STATUS.completed)), isNull(orders.awaitingOperatorSince)))
    .returning({ id: orders.id });
  return rows.length > 0;
}

export type TopUpFulfilment = 'completed' | 'refunded' | 'awaiting_operator' | 'noop';

/** Deliveries a top-up order gets before it waits for an operator: as many as its job's attempts. */
export const DELIVERY_ATTEMPTS = DEFAULT_JOB_OPTIONS.attempts;

/**
 * Hands a top-up order to the configured provider. Idempotent: an order that left `initiate`, or waits
 * for an operator, is not sent again. A provider that is unavailable throws ProviderUnavailableError, so
 * the job is retried, until the order's own delivery budget is used up: then it waits for an operator.
 * The manual provider hands every order to an operator at once.
 */
export async function fulfilTopUpOrder(
  { db, logger, metrics, provider }: { db: Db; logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; provider: TopUpProvider },
  orderId: number,
  attempts: number = DELIVERY_ATTEMPTS,
): Promise<TopUpFulfilment> {
  const observe = statusObserver({ logger, metrics });
  const claimed = await claimDelivery(db, orderId);
  if (!claimed) return 'noop';
  const { utr } = claimed.request;
  let outcome: ProviderOutcome;
  try {
    outcome = await provider.send(claimed.request);
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError) || claimed.attempts < attempts) throw err;
    await handToOperator(db, orderId, `Not delivered after ${claimed.attempts} attempts: ${err.message}`);
    logger.warn({ utr, err }, 'top-up deliveries used up; the order waits for an operator');
    return 'awaiting_operator';
  }
  if (outcome.kind === 'pending') {
    await handToOperator(db, orderId, 'Waiting for an operator to deliver it.');
    return 'awaiting_operator';
  }
  if (outcome.kind === 'refused') {
    await refundOrder(db, utr, outcome.reason, observe);
    return 'refunded';
  }
  const moved = await transitionOrder(db, orderId, ORDER_STATUS.completed);
  // Top-up orders are never stock_short: a move to completed is from initiate.
  if (moved) observe(statusChange(moved));
  // An operator refunded it while the provider was delivering: both happened, someone must look.
  else logger.warn({ utr }, 'top-up delivered after the order left initiate');
  return 'completed';
}

/** An operator marks a top-up order delivered (initiate → completed); `observe` hears of it once committed. */
export async function completeTopUpOrder(
  db: DbOrTx,
  utr: string,
  note?: string,
  observe: StatusObserver = unobserved,
): Promise<{ utr: string; status: OrderStatus }> {
  const change = await db.transaction(async (tx) => {
    const order = await lockOrder(tx, utr);
    if (order.kind !== 'top_up') throw new AppError('invalid_transition', 'Only top-up orders are completed by an operator; card orders complete when their codes are assigned.');
    ensureTransition(order.status, ORDER_STATUS.completed);
    const moved = await transitionOrder(tx, order.id, ORDER_STATUS.completed, note === undefined ? {} : { note });
    if (!moved) throw new AppError('invalid_transition');
    return statusChange(moved);
  });
  observe(change);
  return { utr, status: change.to };
}
