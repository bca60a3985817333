import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import type { DeliveryStatus, WebhookEventType } from '../../db/schema.js';
import type { Config } from '../../core/env.js';
import { decrypt } from '../../lib/crypto.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { isoMicros } from '../../lib/time.js';
import { webhookHeaders } from '../../lib/webhook-signature.js';
import { batcher } from '../../lib/batch.js';
import type { WebhookSender } from './destinations.js';

/** The Standard Webhooks retry schedule after the first attempt: about a day in all (C17). */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
/** An endpoint whose attempts have failed for this long, without a success in between, is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
const TIMEOUT_MS = 10_000;
const EXCERPT_CHARS = 500;

export type DeliveryDeps = {
  logger: Pick<Logger, 'warn'>;
  config: Pick<Config, 'codeEncryptionKey' | 'ADMIN_WEBHOOK_URL' | 'ADMIN_WEBHOOK_SECRET' | 'WEBHOOK_ALLOW_PRIVATE'>;
  metrics: Pick<Metrics, 'webhookDelivered'>;
  sender: Pick<WebhookSender, 'post'>;
  /** Records one attempt with the others that end at the same moment (see attemptRecorder). */
  record: (attempt: Attempt) => Promise<AttemptOutcome>;
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

/** One attempt of one delivery, as it is recorded. */
export type Attempt = {
  delivery: Pick<DueDelivery, 'id' | 'attempts' | 'endpoint_id'>;
  status: DeliveryStatus;
  statusCode?: number | undefined;
  excerpt?: string | undefined;
  error?: string | undefined;
  durationMs?: number;
  nextDelayMs?: number;
};

/** The body every attempt of an event sends, byte for byte (the signature covers it). */
export function eventBody(event: { type: string; created_at: string; data: Record<string, unknown> }): string {
  return JSON.stringify({ type: event.type, timestamp: isoMicros(event.created_at), data: event.data });
}

/**
 * Makes one attempt of each delivery of a batch that is still pending, all at once: read in one statement, signed,
 * POSTed (10 s, redirects not followed) and recorded as each answer comes, so a slow receiver delays only its own
 * deliveries. Each is marked delivered, given its next attempt, or given up after the last one.
 */
export async function deliverBatch(db: Db, deps: DeliveryDeps, deliveryIds: readonly number[]): Promise<AttemptOutcome[]> {
  const due = await db.execute<DueDelivery>(sql`
    select d.id::float8 as id, d.attempts, d.event_id::float8 as event_id, e.type, e.data, e.created_at,
      d.endpoint_id, p.url, p.secret_sealed, (p.enabled and p.deleted_at is null) as live
    from webhook_deliveries d
    join webhook_events e on e.id = d.event_id
    left join webhook_endpoints p on p.id = d.endpoint_id
    where d.id = any(${sql.param(deliveryIds.map(String))}::bigint[]) and d.status = 'pending'
      -- Due: an attempt that was recorded waits for its next one, which a job run again must not send early. (Not
      -- enqueued_at: the job may run before the relay's hand-off has committed.)
      and d.next_attempt_at <= now()`);
  const secrets = new Map<number, string>();
  return Promise.all(
    due.map(async (delivery): Promise<AttemptOutcome> => {
      try {
        const outcome = await attempt(deps, delivery, secrets);
        if (outcome.status !== 'noop') deps.metrics.webhookDelivered(outcome.status === 'pending' ? 'retrying' : outcome.status);
        return outcome;
      } catch (err) {
        // Not recorded (the recording's transaction failed): still handed over, so the relay hands it again later.
        deps.logger.warn({ err, deliveryId: delivery.id }, 'webhook attempt not recorded; the relay hands it again');
        return { status: 'noop' };
      }
    }),
  );
}

async function attempt(deps: DeliveryDeps, delivery: DueDelivery, secrets: Map<number, string>): Promise<AttemptOutcome> {
  const target = targetOf(delivery, deps.config, secrets);
  if (!target) return deps.record({ delivery, status: 'skipped', error: 'The endpoint is disabled, deleted or not configured.' });

  const body = eventBody(delivery);
  const started = performance.now();
  let statusCode: number | undefined;
  let excerpt: string | undefined;
  let error: string | undefined;
  try {
    // Signed at the attempt: receivers refuse timestamps older than a few minutes, and retries run for a day.
    const headers = webhookHeaders(target.secret, `msg_${delivery.event_id}`, Math.floor(Date.now() / 1000), body);
    const answer = await deps.sender.post(
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
  // PostgreSQL text holds no NUL character: a receiver's answer could carry one.
  excerpt = excerpt?.replaceAll('\u0000', '\uFFFD');
  error = error?.replaceAll('\u0000', '\uFFFD');
  const ok = statusCode !== undefined && statusCode >= 200 && statusCode < 300;
  const delays = deps.retryDelaysMs ?? RETRY_DELAYS_MS;
  const nextDelay = delays[delivery.attempts];
  const status: DeliveryStatus = ok ? 'delivered' : nextDelay === undefined ? 'failed' : 'pending';
  return deps.record({ delivery, status, statusCode, excerpt, error, durationMs, nextDelayMs: nextDelay ?? 0 });
}

/** Where a delivery goes. The operators' own ADMIN_WEBHOOK_URL is configuration they trust: any address. */
function targetOf(
  delivery: DueDelivery,
  config: DeliveryDeps['config'],
  secrets: Map<number, string>,
): { url: string; secret: string; allowPrivate: boolean } | null {
  if (delivery.endpoint_id === null) {
    return config.ADMIN_WEBHOOK_URL && config.ADMIN_WEBHOOK_SECRET
      ? { url: config.ADMIN_WEBHOOK_URL, secret: config.ADMIN_WEBHOOK_SECRET, allowPrivate: true }
      : null;
  }
  if (!delivery.live || !delivery.url || !delivery.secret_sealed) return null;
  let secret = secrets.get(delivery.endpoint_id);
  if (secret === undefined) secrets.set(delivery.endpoint_id, (secret = decrypt(config.codeEncryptionKey, delivery.secret_sealed)));
  return { url: delivery.url, secret, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE };
}

/**
 * Records attempts in batches (group commit, lib/batch.ts): the attempts that end while a batch is being written go
 * together in the next transaction. Each attempt moves its delivery only if nobody moved it since it was read (a
 * stale attempt changes nothing: `noop`), adds its row to webhook_attempts and updates its endpoint's failing run.
 */
export function attemptRecorder(db: Db, { maxSize = 500 } = {}): (attempt: Attempt) => Promise<AttemptOutcome> {
  return batcher((attempts: Attempt[]) => recordAttempts(db, attempts).then((outcomes) => outcomes.map((value) => ({ status: 'fulfilled' as const, value }))), {
    maxSize,
    // One at a time: two could lock the same endpoint rows in opposite orders.
    inFlight: 1,
  });
}

async function recordAttempts(db: Db, attempts: Attempt[]): Promise<AttemptOutcome[]> {
  const column = <T>(pick: (a: Attempt) => T) => sql.param(attempts.map(pick));
  return db.transaction(async (tx) => {
    const moved = await tx.execute<{ n: number }>(sql`
      with attempt as (
        select * from unnest(
          ${column((a) => String(a.delivery.id))}::bigint[], ${column((a) => a.delivery.attempts)}::int[],
          ${column((a) => a.status)}::text[], ${column((a) => a.statusCode ?? null)}::int[],
          ${column((a) => a.error ?? null)}::text[], ${column((a) => a.nextDelayMs ?? 0)}::int[]
        ) with ordinality as a(id, attempts, status, status_code, error, next_delay_ms, n)
      )
      update webhook_deliveries d set
        status = a.status,
        attempts = d.attempts + case when a.status = 'skipped' then 0 else 1 end,
        next_attempt_at = now() + a.next_delay_ms * interval '1 millisecond',
        enqueued_at = null,
        last_status_code = a.status_code,
        last_error = a.error,
        delivered_at = case when a.status = 'delivered' then now() end,
        finished_at = case when a.status = 'pending' then null else now() end
      from attempt a
      where d.id = a.id and d.status = 'pending' and d.attempts = a.attempts
      returning a.n::int as n`);
    const recorded = new Set(moved.map((row) => row.n - 1));
    const tried = attempts.filter((a, i) => recorded.has(i) && a.status !== 'skipped');
    if (tried.length > 0) {
      const tryColumn = <T>(pick: (a: Attempt) => T) => sql.param(tried.map(pick));
      await tx.execute(sql`
        insert into webhook_attempts (delivery_id, status_code, duration_ms, response_excerpt, error)
        select * from unnest(${tryColumn((a) => String(a.delivery.id))}::bigint[], ${tryColumn((a) => a.statusCode ?? null)}::int[],
          ${tryColumn((a) => a.durationMs ?? 0)}::int[], ${tryColumn((a) => a.excerpt ?? null)}::text[], ${tryColumn((a) => a.error ?? null)}::text[])`);
      await noteEndpointHealth(tx, tried.filter((a) => a.delivery.endpoint_id !== null).map((a) => [a.delivery.endpoint_id!, a.status === 'delivered'] as const));
    }
    return attempts.map((a, i): AttemptOutcome =>
      recorded.has(i) ? { status: a.status, ...(a.statusCode !== undefined ? { statusCode: a.statusCode } : {}) } : { status: 'noop' },
    );
  });
}

/**
 * A success ends a failing run; a failure starts one, and a run of 5 days disables the endpoint. `outcomes`: each
 * attempt's endpoint and whether it succeeded, in the order they ended: an endpoint whose last attempt succeeded ends
 * its run; one that failed after a success in the same batch starts a new run now; one that only failed goes on.
 */
async function noteEndpointHealth(db: DbOrTx, outcomes: ReadonlyArray<readonly [endpointId: number, succeeded: boolean]>): Promise<void> {
  const last = new Map<number, boolean>();
  const succeededOnce = new Set<number>();
  for (const [id, succeeded] of outcomes) {
    last.set(id, succeeded);
    if (succeeded) succeededOnce.add(id);
  }
  const ids = [...last.keys()].sort((a, b) => a - b);
  const recovered = ids.filter((id) => last.get(id));
  const failingAfresh = ids.filter((id) => !last.get(id) && succeededOnce.has(id));
  const failing = ids.filter((id) => !last.get(id) && !succeededOnce.has(id));
  if (recovered.length > 0) {
    await db.execute(sql`update webhook_endpoints set failing_since = null where id = any(${sql.param(recovered)}::int[]) and failing_since is not null`);
  }
  if (failingAfresh.length > 0) {
    await db.execute(sql`update webhook_endpoints set failing_since = now() where id = any(${sql.param(failingAfresh)}::int[])`);
  }
  if (failing.length === 0) return;
  await db.execute(sql`
    update webhook_endpoints set
      failing_since = coalesce(failing_since, now()),
      enabled = enabled and coalesce(failing_since, now()) > now() - ${DISABLE_AFTER_MS} * interval '1 millisecond',
      disabled_at = case when enabled and coalesce(failing_since, now()) <= now() - ${DISABLE_AFTER_MS} * interval '1 millisecond'
        then now() else disabled_at end
    where id = any(${sql.param(failing)}::int[])`);
}

/**
 * Marks the deliveries that are due as handed to the queue, and returns them with the hand-off's time (ms) and their
 * endpoint: new ones, retries whose time has come, and hand-offs Redis lost (still pending `lostAfterMs` later). An
 * endpoint never has more than `perEndpoint` deliveries handed and not yet answered: a slow or dead receiver keeps
 * its own backlog in the outbox instead of taking the senders from the others. The hand-off time names the job, so a
 * job kept in Redis from an earlier hand-off never hides a new one.
 */
export async function dueDeliveries(
  db: DbOrTx,
  { limit, lostAfterMs, perEndpoint }: { limit: number; lostAfterMs: number; perEndpoint: number },
): Promise<DueHandOff[]> {
  const lost = sql`now() - ${lostAfterMs} * interval '1 millisecond'`;
  return db.execute<DueHandOff>(sql`
    -- Due rows only (the due index): a handed delivery was due when it was handed, and retries scheduled for later
    -- are neither handed nor due.
    with pending as (
      select id, endpoint_id, next_attempt_at, enqueued_at is not null and enqueued_at >= ${lost} as handed
      from webhook_deliveries where status = 'pending' and next_attempt_at <= now()
    ),
    in_flight as (
      select endpoint_id, count(*) as n from pending where handed group by endpoint_id
    ),
    ranked as (
      select p.id, p.next_attempt_at,
        row_number() over (partition by p.endpoint_id order by p.next_attempt_at, p.id) + coalesce(f.n, 0) as place
      from pending p left join in_flight f on f.endpoint_id is not distinct from p.endpoint_id
      where not p.handed
    )
    update webhook_deliveries d set enqueued_at = clock_timestamp()
    where d.id in (select id from ranked where place <= ${perEndpoint} order by next_attempt_at, id limit ${limit})
      and d.status = 'pending' and d.next_attempt_at <= now() and (d.enqueued_at is null or d.enqueued_at < ${lost})
    returning d.id::float8 as id, d.endpoint_id as "endpointId", floor(extract(epoch from d.enqueued_at) * 1000)::float8 as "handOff"`);
}

export type DueHandOff = { id: number; endpointId: number | null; handOff: number };
