import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { orderLines, orders, topUps, topUpServices } from '../../db/schema.js';
import type { Config } from '../../env.js';
import type { Services } from '../../http/context.js';
import { hmacSha256 } from '../../lib/crypto.js';
import { ORDER_STATUS, transitionOrder } from '../orders/state.js';
import { refundOrder } from './refund.js';

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

export type TopUpProvider = { name: string; send: (request: TopUpRequest) => Promise<ProviderOutcome> };

/** Thrown for answers worth retrying (network errors, 5xx, 408, 429): the queue retries with backoff. */
export class ProviderUnavailableError extends Error {}

/** The order stays `initiate` until an operator completes or refunds it (POST /admin/orders/:utr/complete). */
export const manualProvider: TopUpProvider = { name: 'manual', send: async () => ({ kind: 'pending' }) };

/**
 * POSTs the order as JSON, signed with `X-Signature: sha256=<hex HMAC-SHA256(secret, body)>`.
 * `X-Timestamp` (unix seconds) lets the provider refuse stale deliveries.
 */
export function httpProvider(url: string, secret: string, timeoutMs = 10_000): TopUpProvider {
  return {
    name: 'http',
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

async function topUpRequest(db: Db, orderId: number): Promise<{ status: number; request: TopUpRequest } | null> {
  const [row] = await db
    .select({
      status: orders.status,
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
    status: row.status,
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
 * Hands a top-up order to the configured provider. Idempotent: an order that already left
 * `initiate` is not sent again. Throws ProviderUnavailableError so the job is retried; when the
 * retries run out the order stays `initiate` for an operator.
 */
export async function fulfilTopUpOrder(
  services: Services,
  orderId: number,
  provider: TopUpProvider = topUpProvider(services.config),
): Promise<void> {
  const found = await topUpRequest(services.db, orderId);
  if (!found || found.status !== ORDER_STATUS.initiate) return;
  const outcome = await provider.send(found.request);
  if (outcome.kind === 'completed') {
    const moved = await transitionOrder(services.db, orderId, ORDER_STATUS.completed);
    // An operator refunded it while the provider was delivering: both happened, someone must look.
    if (!moved) services.logger.warn({ utr: found.request.utr }, 'top-up delivered after the order left initiate');
  } else if (outcome.kind === 'refused') {
    await refundOrder(services.db, found.request.utr, outcome.reason);
  }
}
