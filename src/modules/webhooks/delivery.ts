import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import type { DeliveryStatus, WebhookEventType } from '../../db/schema.js';
import type { Config } from '../../core/env.js';
import { decrypt } from '../../lib/crypto.js';
import type { Metrics } from '../../lib/metrics.js';
import { isoMicros } from '../../lib/time.js';
import { webhookHeaders } from '../../lib/webhook-signature.js';
import { postWebhook } from './destinations.js';

/** The Standard Webhooks retry schedule after the first attempt: about a day in all (C17). */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
/** An endpoint whose attempts have failed for this long, without a success in between, is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
const TIMEOUT_MS = 10_000;
const EXCERPT_CHARS = 500;

export type DeliveryDeps = {
  db: Db;
  config: Pick<Config, 'codeEncryptionKey' | 'ADMIN_WEBHOOK_URL' | 'ADMIN_WEBHOOK_SECRET' | 'WEBHOOK_ALLOW_PRIVATE'>;
  metrics: Pick<Metrics, 'webhookDelivered'>;
  retryDelaysMs?: readonly number[] | undefined;
};

/** What one attempt came to: the delivery's new status (`pending` = another attempt is scheduled). */
export type AttemptOutcome = { status: DeliveryStatus | 'noop'; statusCode?: number };

type DueDelivery = {
  id: number;
  attempts: number;
  event_id: number;
  type: WebhookEventType;
  data: Record<string, unknown>;
  created_at: string;
  endpoint_id: number | null;
  url: string | null;
  secret_sealed: Buffer | null;
  live: boolean | null;
};

/** The body every attempt of an event sends, byte for byte (the signature covers it). */
export function eventBody(event: { type: string; created_at: string; data: Record<string, unknown> }): string {
  return JSON.stringify({ type: event.type, timestamp: isoMicros(event.created_at), data: event.data });
}

/**
 * Makes one attempt of a pending delivery: signs, POSTs (10 s, redirects not followed), records the attempt,
 * and marks the delivery delivered, schedules the next attempt, or gives up after the last one.
 */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: number): Promise<AttemptOutcome> {
  const outcome = await attempt(deps, deliveryId);
  if (outcome.status !== 'noop') deps.metrics.webhookDelivered(outcome.status === 'pending' ? 'retrying' : outcome.status);
  return outcome;
}

async function attempt(deps: DeliveryDeps, deliveryId: number): Promise<AttemptOutcome> {
  const { db, config } = deps;
  const [delivery] = await db.execute<DueDelivery>(sql`
    select d.id::float8 as id, d.attempts, d.event_id::float8 as event_id, e.type, e.data, e.created_at,
      d.endpoint_id, p.url, p.secret_sealed, (p.enabled and p.deleted_at is null) as live
    from webhook_deliveries d
    join webhook_events e on e.id = d.event_id
    left join webhook_endpoints p on p.id = d.endpoint_id
    where d.id = ${deliveryId} and d.status = 'pending'`);
  if (!delivery) return { status: 'noop' };

  const target = targetOf(delivery, config);
  if (!target) return settle(db, delivery, 'skipped', { error: 'The endpoint is disabled, deleted or not configured.' });

  const body = eventBody(delivery);
  const started = performance.now();
  let statusCode: number | undefined;
  let excerpt: string | undefined;
  let error: string | undefined;
  try {
    // Signed at the attempt: receivers refuse timestamps older than a few minutes, and retries run for a day.
    const headers = webhookHeaders(target.secret, `msg_${delivery.event_id}`, Math.floor(Date.now() / 1000), body);
    const answer = await postWebhook(
      target.url,
      { 'content-type': 'application/json', 'user-agent': 'topup-store-webhooks/1', ...headers },
      body,
      { allowPrivate: target.allowPrivate, timeoutMs: TIMEOUT_MS, excerptBytes: EXCERPT_CHARS },
    );
    statusCode = answer.status;
    excerpt = answer.excerpt;
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  const durationMs = Math.round(performance.now() - started);
  const ok = statusCode !== undefined && statusCode >= 200 && statusCode < 300;
  const delays = deps.retryDelaysMs ?? RETRY_DELAYS_MS;
  const nextDelay = delays[delivery.attempts];
  const status: DeliveryStatus = ok ? 'delivered' : nextDelay === undefined ? 'failed' : 'pending';
  return settle(db, delivery, status, { statusCode, excerpt, error, durationMs, nextDelayMs: nextDelay ?? 0 });
}

/** Where a delivery goes. The operators' own ADMIN_WEBHOOK_URL is configuration they trust: any address. */
function targetOf(delivery: DueDelivery, config: DeliveryDeps['config']): { url: string; secret: string; allowPrivate: boolean } | null {
  if (delivery.endpoint_id === null) {
    return config.ADMIN_WEBHOOK_URL && config.ADMIN_WEBHOOK_SECRET
      ? { url: config.ADMIN_WEBHOOK_URL, secret: config.ADMIN_WEBHOOK_SECRET, allowPrivate: true }
      : null;
  }
  if (!delivery.live || !delivery.url || !delivery.secret_sealed) return null;
  return { url: delivery.url, secret: decrypt(config.codeEncryptionKey, delivery.secret_sealed), allowPrivate: config.WEBHOOK_ALLOW_PRIVATE };
}

/** Records the attempt and the delivery's new state in one transaction; a stale attempt changes nothing. */
async function settle(
  db: Db,
  delivery: DueDelivery,
  status: DeliveryStatus,
  attempt: { statusCode?: number; excerpt?: string; error?: string; durationMs?: number; nextDelayMs?: number },
): Promise<AttemptOutcome> {
  return db.transaction(async (tx) => {
    const moved = await tx.execute(sql`
      update webhook_deliveries set
        status = ${status},
        attempts = attempts + ${status === 'skipped' ? 0 : 1},
        next_attempt_at = now() + ${attempt.nextDelayMs ?? 0} * interval '1 millisecond',
        enqueued_at = null,
        last_status_code = ${attempt.statusCode ?? null},
        last_error = ${attempt.error ?? null},
        delivered_at = ${status === 'delivered' ? sql`now()` : null},
        finished_at = ${status === 'pending' ? null : sql`now()`}
      where id = ${delivery.id} and status = 'pending' and attempts = ${delivery.attempts}
      returning id`);
    if (moved.length === 0) return { status: 'noop' };
    if (status !== 'skipped') {
      await tx.execute(sql`
        insert into webhook_attempts (delivery_id, status_code, duration_ms, response_excerpt, error)
        values (${delivery.id}, ${attempt.statusCode ?? null}, ${attempt.durationMs ?? 0}, ${attempt.excerpt ?? null}, ${attempt.error ?? null})`);
      if (delivery.endpoint_id !== null) await noteEndpointHealth(tx, delivery.endpoint_id, status === 'delivered');
    }
    return { status, ...(attempt.statusCode !== undefined ? { statusCode: attempt.statusCode } : {}) };
  });
}

/** A success ends a failing run; a failure starts one, and a run of 5 days disables the endpoint. */
async function noteEndpointHealth(db: DbOrTx, endpointId: number, succeeded: boolean): Promise<void> {
  if (succeeded) {
    await db.execute(sql`update webhook_endpoints set failing_since = null where id = ${endpointId} and failing_since is not null`);
    return;
  }
  await db.execute(sql`
    update webhook_endpoints set
      failing_since = coalesce(failing_since, now()),
      enabled = enabled and coalesce(failing_since, now()) > now() - ${DISABLE_AFTER_MS} * interval '1 millisecond',
      disabled_at = case when enabled and coalesce(failing_since, now()) <= now() - ${DISABLE_AFTER_MS} * interval '1 millisecond'
        then now() else disabled_at end
    where id = ${endpointId}`);
}

/**
 * Marks the deliveries that are due as handed to the queue, and returns them with the hand-off's time (ms):
 * new ones, retries whose time has come, and hand-offs Redis lost (still pending `lostAfterMs` later). The
 * hand-off time names the job, so a job kept in Redis from an earlier hand-off never hides a new one.
 */
export async function dueDeliveries(db: DbOrTx, limit: number, lostAfterMs: number): Promise<{ id: number; handOff: number }[]> {
  return db.execute<{ id: number; handOff: number }>(sql`
    update webhook_deliveries set enqueued_at = clock_timestamp()
    where id in (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
        and (enqueued_at is null or enqueued_at < now() - ${lostAfterMs} * interval '1 millisecond')
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked)
    returning id::float8 as id, floor(extract(epoch from enqueued_at) * 1000)::float8 as "handOff"`);
}
