import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteStockLevels } from '../../src/modules/inventory/low-stock.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { pruneBatch } from '../../src/modules/retention/index.js';
import { createTestAccount } from '../helpers/api.js';
import { createCardService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, placeCardOrder, stockCodes, waitFor, waitForStatus } from '../workers/support.js';
import { ORDER_STATUS } from '../../src/modules/order-state/state.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const DEFAULTS = { tokenDays: 7, webhookDays: 30 };
const sql = () => app.services.sql;

/** A token of `accountId` that ended `endedDaysAgo` days ago (negative: still live), by expiry or revocation. */
async function token(accountId: number, endedDaysAgo: number, by: 'expiry' | 'revocation' = 'expiry'): Promise<number> {
  const ended = `${-endedDaysAgo} days`;
  const [row] = await sql()<{ id: number }[]>`
    insert into auth_tokens (account_id, token_hash, expires_at, revoked_at)
    values (${accountId}, ${randomBytes(32)},
      ${by === 'expiry' ? sql()`now() + ${ended}::interval` : sql()`now() + interval '1 day'`},
      ${by === 'revocation' ? sql()`now() + ${ended}::interval` : null})
    returning id::int as id`;
  return row!.id;
}

async function idempotencyKey(accountId: number, hoursAgo: number): Promise<string> {
  const key = `key-${randomBytes(6).toString('hex')}`;
  await sql()`
    insert into idempotency_keys (account_id, key, endpoint, request_digest, response_status, response_body, created_at)
    values (${accountId}, ${key}, 'card', ${randomBytes(32)}, 200, '{"utr":"X"}', now() - ${`${hoursAgo} hours`}::interval)`;
  return key;
}

/**
 * An event created `createdDaysAgo` days ago with one delivery per entry of `finishedDaysAgo` (null: still
 * pending), each with one attempt.
 */
async function event(createdDaysAgo: number, finishedDaysAgo: Array<number | null>): Promise<number> {
  const [row] = await sql()<{ id: number }[]>`
    insert into webhook_events (type, account_id, data, created_at)
    values ('stock.low', null, '{}', now() - ${`${createdDaysAgo} days`}::interval) returning id::int as id`;
  for (const finished of finishedDaysAgo) {
    const [delivery] = await sql()<{ id: number }[]>`
      insert into webhook_deliveries (event_id, status, attempts, finished_at, created_at)
      values (${row!.id}, ${finished === null ? 'pending' : 'failed'}, 1,
        ${finished === null ? null : sql()`now() - ${`${finished} days`}::interval`}, now() - ${`${createdDaysAgo} days`}::interval)
      returning id::int as id`;
    await sql()`
      insert into webhook_attempts (delivery_id, status_code, duration_ms, created_at)
      values (${delivery!.id}, 500, 12, ${finished === null ? sql()`now()` : sql()`now() - ${`${finished} days`}::interval`})`;
  }
  return row!.id;
}

const exists = async (table: string, column: string, value: unknown) =>
  (await sql().unsafe(`select 1 from ${table} where ${column} = $1`, [value as string])).length > 0;

/** What is never pruned (C23): orders, order lines, card codes and the balance ledger, counted whole. */
const kept = async () =>
  (
    await sql()<{ orders: number; lines: number; codes: number; ledger: number }[]>`
      select (select count(*) from orders)::int as orders, (select count(*) from order_lines)::int as lines,
        (select count(*) from card_codes)::int as codes, (select count(*) from balance_ledger)::int as ledger`
  )[0]!;

describe('retention (C23)', () => {
  it('deletes what is past its window and keeps the rest', async () => {
    const { id: accountId } = await createTestAccount(app);
    const tokens = {
      expiredLongAgo: await token(accountId, 8),
      revokedLongAgo: await token(accountId, 8, 'revocation'),
      expiredRecently: await token(accountId, 6),
      revokedRecently: await token(accountId, 6, 'revocation'),
      live: await token(accountId, -1),
    };
    // Kept an hour past their 24 h, so that a repeat just before the 24 h still finds its key to replay.
    const keys = { old: await idempotencyKey(accountId, 26), fresh: await idempotencyKey(accountId, 24.5) };
    const events = {
      allFinishedLongAgo: await event(40, [31, 35]),
      noDeliveries: await event(31, []),
      onePending: await event(40, [35, null]),
      oneFinishedRecently: await event(40, [35, 29]),
      recent: await event(5, [5]),
    };

    await pruneBatch(app.services.db, DEFAULTS, 1000);

    expect(await exists('auth_tokens', 'id', tokens.expiredLongAgo)).toBe(false);
    expect(await exists('auth_tokens', 'id', tokens.revokedLongAgo)).toBe(false);
    for (const id of [tokens.expiredRecently, tokens.revokedRecently, tokens.live]) expect(await exists('auth_tokens', 'id', id)).toBe(true);
    expect(await exists('idempotency_keys', 'key', keys.old)).toBe(false);
    expect(await exists('idempotency_keys', 'key', keys.fresh)).toBe(true);
    for (const id of [events.allFinishedLongAgo, events.noDeliveries]) {
      expect(await exists('webhook_events', 'id', id)).toBe(false);
      expect(await exists('webhook_deliveries', 'event_id', id)).toBe(false);
    }
    for (const id of [events.onePending, events.oneFinishedRecently, events.recent]) {
      expect(await exists('webhook_events', 'id', id)).toBe(true);
      const [row] = await sql()<{ deliveries: number; attempts: number }[]>`
        select count(distinct d.id)::int as deliveries, count(a.id)::int as attempts
        from webhook_deliveries d left join webhook_attempts a on a.delivery_id = d.id where d.event_id = ${id}`;
      expect(row, String(id)).toEqual({ deliveries: id === events.recent ? 1 : 2, attempts: id === events.recent ? 1 : 2 });
    }
  });

  it('follows TOKEN_RETENTION_DAYS and WEBHOOK_RETENTION_DAYS', async () => {
    const { id: accountId } = await createTestAccount(app);
    const tokenId = await token(accountId, 3);
    const eventId = await event(20, [10]);
    await pruneBatch(app.services.db, DEFAULTS, 1000);
    expect(await exists('auth_tokens', 'id', tokenId)).toBe(true);
    expect(await exists('webhook_events', 'id', eventId)).toBe(true);
    await pruneBatch(app.services.db, { tokenDays: 2, webhookDays: 9 }, 1000);
    expect(await exists('auth_tokens', 'id', tokenId)).toBe(false);
    expect(await exists('webhook_events', 'id', eventId)).toBe(false);
  });

  it('never deletes orders, order lines, card codes or the ledger, however old', async () => {
    const buyer = await createBuyer(app);
    const service = await createCardService(app.services.db, '2.00');
    await stockCodes(app, service.serviceId, 3);
    await app.startWorkers();
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitForStatus(app, utr, ORDER_STATUS.completed);
    await sql()`update orders set created_at = now() - interval '3 years', updated_at = now() - interval '3 years'`;
    await sql()`update card_codes set created_at = now() - interval '3 years'`;
    await sql()`update balance_ledger set created_at = now() - interval '3 years'`;
    const before = await kept();
    expect(before.orders).toBeGreaterThan(0);
    await pruneBatch(app.services.db, { tokenDays: 1, webhookDays: 1 }, 1000);
    expect(await kept()).toEqual(before);
  });

  it('keeps an event whose delivery was sent once more, and a key placement took over again', async () => {
    const { id: accountId } = await createTestAccount(app);
    const eventId = await event(40, [35]);
    await sql()`update webhook_deliveries set status = 'pending', finished_at = null where event_id = ${eventId}`;
    const key = await idempotencyKey(accountId, 26);
    await sql()`update idempotency_keys set created_at = now() where key = ${key}`;
    await pruneBatch(app.services.db, DEFAULTS, 1000);
    expect(await exists('webhook_events', 'id', eventId)).toBe(true);
    expect(await exists('idempotency_keys', 'key', key)).toBe(true);
  });

  it('walks past an event kept back, batch after batch', async () => {
    await pruneBatch(app.services.db, DEFAULTS, 1000);
    const keptBack = await event(50, [null]);
    const behind = [await event(45, [40]), await event(44, [40])];
    const first = await pruneBatch(app.services.db, DEFAULTS, 1);
    expect(first.events.looked).toBe(1);
    expect(first.pruned.webhook_events).toBe(0);
    const second = await pruneBatch(app.services.db, DEFAULTS, 1, first.events.cursor);
    expect(second.pruned.webhook_events).toBe(1);
    const third = await pruneBatch(app.services.db, DEFAULTS, 1, second.events.cursor);
    expect(third.pruned.webhook_events).toBe(1);
    expect(await exists('webhook_events', 'id', keptBack)).toBe(true);
    for (const id of behind) expect(await exists('webhook_events', 'id', id)).toBe(false);
  });

  it('counts a delivery finished before finished_at was kept from its last attempt', async () => {
    const longAgo = await event(40, [35]);
    const recently = await event(40, [35]);
    await sql()`update webhook_deliveries set finished_at = null where event_id in (${longAgo}, ${recently})`;
    await sql()`
      update webhook_attempts a set created_at = now() - interval '10 days'
      from webhook_deliveries d where d.id = a.delivery_id and d.event_id = ${recently}`;
    await pruneBatch(app.services.db, DEFAULTS, 1000);
    expect(await exists('webhook_events', 'id', longAgo)).toBe(false);
    expect(await exists('webhook_events', 'id', recently)).toBe(true);
  });

  it('deletes in batches: at most `batch` rows of a kind per statement', async () => {
    const { id: accountId } = await createTestAccount(app);
    const ids = await Promise.all(Array.from({ length: 5 }, () => token(accountId, 10)));
    const first = await pruneBatch(app.services.db, DEFAULTS, 2);
    expect(first.pruned.auth_tokens).toBe(2);
    const left = async () => (await Promise.all(ids.map((id) => exists('auth_tokens', 'id', id)))).filter(Boolean).length;
    expect(await left()).toBe(3);
    expect((await pruneBatch(app.services.db, DEFAULTS, 2)).pruned.auth_tokens).toBe(2);
    expect((await pruneBatch(app.services.db, DEFAULTS, 2)).pruned.auth_tokens).toBe(1);
    expect(await left()).toBe(0);
  });

  it('keeps the count of stock.low alerts on /metrics when their events are deleted', async () => {
    const service = await createCardService(app.services.db, '2.00');
    await app.services.sql`update card_services set low_stock_threshold = 5 where id = ${service.serviceId}`;
    await noteStockLevels(app.services.db, [service.serviceId]);
    const series = new RegExp(`^low_stock_alerts_total\\{card_service_id="${service.serviceId}"\\} 1$`, 'm');
    expect(await app.scrape()).toMatch(series);
    await sql()`
      update webhook_events set created_at = now() - interval '40 days' where type = 'stock.low' and (data->>'card_service_id')::int = ${service.serviceId}`;
    await sql()`
      update webhook_deliveries d set status = 'skipped', finished_at = now() - interval '35 days'
      from webhook_events e where e.id = d.event_id and (e.data->>'card_service_id')::int = ${service.serviceId}`;
    const pruned = await pruneBatch(app.services.db, DEFAULTS, 1000);
    expect(pruned.pruned.webhook_events).toBeGreaterThanOrEqual(1);
    expect(await app.scrape()).toMatch(series);
  });
});

describe('the retention timer in the worker processes', () => {
  let timed: TestApp;
  beforeAll(async () => {
    timed = await startTestApp({ workers: true, workerOptions: { retention: { intervalMs: 200, batchSize: 3 } } });
  });
  afterAll(() => timed?.close());

  it('works through a backlog in batches by itself and counts what it deleted on /metrics', async () => {
    const { id: accountId } = await createTestAccount(timed);
    await timed.services.sql`
      insert into auth_tokens (account_id, token_hash, expires_at)
      select ${accountId}, sha256(i::text::bytea || ${randomBytes(8)}), now() - interval '30 days' from generate_series(1, 10) i`;
    // Counted batch by batch, as each commits: the total reaches 10 once the last batch is in.
    await waitFor('the timer to delete and count the expired tokens', async () =>
      /^retention_deleted_rows_total\{table="auth_tokens"\} 10$/m.test(await timed.scrape()),
    );
    const [row] = await timed.services.sql<{ n: number }[]>`select count(*)::int as n from auth_tokens where expires_at < now() - interval '7 days'`;
    expect(row!.n).toBe(0);
  });
});

describe('the indexes retention reads, on tables that may be large by then', () => {
  const indexes = ['auth_tokens_ended_idx', 'webhook_events_created_idx'];
  const states = async () =>
    app.services.sql<{ name: string; valid: boolean }[]>`
      select c.relname as name, i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
      where c.relname in ${app.services.sql(indexes)} order by c.relname`;

  it('are built by the migration step, and built again when a build was cut off', async () => {
    expect(await states()).toEqual(indexes.map((name) => ({ name, valid: true })));
    // What a CREATE INDEX CONCURRENTLY cut off by a crash leaves behind.
    await sql()`update pg_index set indisvalid = false where indexrelid = 'webhook_events_created_idx'::regclass`;
    await migrateDatabase(app.services.config.DATABASE_URL);
    expect(await states()).toEqual(indexes.map((name) => ({ name, valid: true })));
  });
});
