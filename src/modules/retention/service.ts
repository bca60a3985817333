import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

/** The tables retention prunes (C23). Orders, order lines, card codes and the balance ledger are never among them. */
export const PRUNED_TABLES = ['auth_tokens', 'idempotency_keys', 'webhook_events', 'webhook_deliveries', 'webhook_attempts'] as const;
export type PrunedTable = (typeof PRUNED_TABLES)[number];
export type PrunedRows = Record<PrunedTable, number>;

export type RetentionWindows = {
  /** Days a token is kept after it expired or was revoked (TOKEN_RETENTION_DAYS). */
  tokenDays: number;
  /** Days an event is kept after the last of its deliveries finished (WEBHOOK_RETENTION_DAYS). */
  webhookDays: number;
};

/**
 * Idempotency keys answer for 24 h (C15) and placement takes over an older key; retention leaves them an hour more,
 * so a repeat that arrives just before the 24 h still finds its key to replay.
 */
const IDEMPOTENCY_RETENTION_HOURS = 25;

export const noPrunedRows = (): PrunedRows => ({ auth_tokens: 0, idempotency_keys: 0, webhook_events: 0, webhook_deliveries: 0, webhook_attempts: 0 });

/** Where a walk through the old webhook events stopped: the next batch looks at the events after it. */
export type EventCursor = { createdAt: string; id: number } | null;

export type PruneBatch = {
  pruned: PrunedRows;
  /** The last event looked at, and how many were (a batch that looked at `batch` events has more to look at). */
  events: { cursor: EventCursor; looked: number };
};

/** When a delivery finished; deliveries that left `pending` before `finished_at` was kept count from their last attempt. */
const finishedAt = (d: SQL) =>
  sql`coalesce(${d}.finished_at, ${d}.delivered_at, (select max(a.created_at) from webhook_attempts a where a.delivery_id = ${d}.id), ${d}.created_at)`;

/**
 * Deletes at most `batch` rows of each kind past its window (C23), each kind in one statement of its own, so no
 * statement holds its locks for long. A row that changed since it was picked (a key taken over again, a delivery
 * sent once more) is kept: every condition is checked again on the row being deleted. Webhook events are looked at
 * in order from `after`: one kept back (a delivery sent again) never stops the walk.
 */
export async function pruneBatch(db: Db, windows: RetentionWindows, batch: number, after: EventCursor = null): Promise<PruneBatch> {
  const pruned = noPrunedRows();
  const [tokens] = await db.execute<{ n: number }>(sql`
    with picked as (
      select id from auth_tokens
      where least(expires_at, revoked_at) < now() - make_interval(days => ${windows.tokenDays})
      order by least(expires_at, revoked_at) limit ${batch}
    ), gone as (
      delete from auth_tokens t using picked
      where t.id = picked.id and least(t.expires_at, t.revoked_at) < now() - make_interval(days => ${windows.tokenDays})
      returning 1
    )
    select count(*)::int as n from gone`);
  pruned.auth_tokens = tokens?.n ?? 0;

  const [keys] = await db.execute<{ n: number }>(sql`
    with picked as (
      select account_id, key from idempotency_keys
      where created_at < now() - make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})
      order by created_at limit ${batch}
    ), gone as (
      delete from idempotency_keys k using picked
      where k.account_id = picked.account_id and k.key = picked.key
        and k.created_at < now() - make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})
      returning 1
    )
    select count(*)::int as n from gone`);
  pruned.idempotency_keys = keys?.n ?? 0;

  // An event goes with its deliveries and their attempts once every delivery finished before the cutoff. The next
  // `batch` old events are looked at, each through its own deliveries (a lateral read over their index), so a run
  // costs the batch and never the history. A delivery sent once more meanwhile is kept, and its event with it (the
  // count of deliveries no longer matches).
  const cutoff = sql`now() - make_interval(days => ${windows.webhookDays})`;
  const from = after ? sql`and (created_at, id) > (${after.createdAt}::timestamptz, ${after.id})` : sql``;
  const [webhooks] = await db.execute<{ events: number; deliveries: number; attempts: number; looked: number; last_created_at: string | null; last_id: number | null }>(sql`
    with looked as (
      select id, created_at from webhook_events where created_at < ${cutoff} ${from} order by created_at, id limit ${batch}
    ), picked as (
      select e.id
      from looked e
      cross join lateral (
        select bool_and(d.status <> 'pending' and ${finishedAt(sql.raw('d'))} < ${cutoff}) as finished
        from webhook_deliveries d where d.event_id = e.id
      ) deliveries
      where deliveries.finished is not false
    ), deliveries as (
      delete from webhook_deliveries d
      where d.event_id in (select id from picked) and d.status <> 'pending' and ${finishedAt(sql.raw('d'))} < ${cutoff}
      returning d.id, d.event_id
    ), attempts as (
      delete from webhook_attempts a where a.delivery_id in (select id from deliveries) returning 1
    ), events as (
      delete from webhook_events e
      where e.id in (select id from picked)
        and (select count(*) from webhook_deliveries d where d.event_id = e.id) = (select count(*) from deliveries x where x.event_id = e.id)
      returning 1
    ), last as (
      select created_at, id from looked order by created_at desc, id desc limit 1
    )
    select (select count(*) from events)::int as events, (select count(*) from deliveries)::int as deliveries,
      (select count(*) from attempts)::int as attempts, (select count(*) from looked)::int as looked,
      (select created_at from last) as last_created_at, (select id::float8 from last) as last_id`);
  pruned.webhook_events = webhooks?.events ?? 0;
  pruned.webhook_deliveries = webhooks?.deliveries ?? 0;
  pruned.webhook_attempts = webhooks?.attempts ?? 0;
  const cursor = webhooks?.last_id != null ? { createdAt: webhooks.last_created_at!, id: webhooks.last_id } : after;
  return { pruned, events: { cursor, looked: webhooks?.looked ?? 0 } };
}
