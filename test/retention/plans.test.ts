import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { loadConfig } from '../../src/core/env.js';
import { loadVolume, timerPlans, type StatementPlan } from '../bench/plans.js';
import { createTestDatabase } from '../helpers/harness.js';

/**
 * The worker timers' queries and the scrape's reads use indexes, not sequential scans of the large tables, on a
 * database of 200,000 orders and 200,000 deliveries analyzed with the default statistics settings. `npm run bench --
 * --plans` runs the same check on 10 million of each.
 */
const VOLUME = 200_000;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let connection: Database;
let plans: StatementPlan[];
beforeAll(async () => {
  database = await createTestDatabase();
  connection = connectDatabase(database.url, { max: 2 });
  await loadVolume(connection.db, connection.sql, VOLUME);
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    BULLMQ_PREFIX: `test:plans:${randomBytes(4).toString('hex')}`,
    CODE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  plans = await timerPlans(config, connection.sql);
}, 180_000);
afterAll(async () => {
  await connection?.close();
  await database?.drop();
});

describe('the timers at volume (C23)', () => {
  it('read no large table by a sequential scan', () => {
    expect(plans.length).toBeGreaterThan(10);
    const scanning = plans.filter((plan) => plan.seqScans.length > 0).map((plan) => `${plan.seqScans.join(', ')}: ${plan.statement.slice(0, 200)}`);
    expect(scanning).toEqual([]);
  });

  it('cover every timer: the reconciler, the relay, stock keeping, campaign sync, balances, retention and the scrape', () => {
    const statements = plans.map((plan) => plan.statement);
    for (const [timer, fragment] of [
      ['reconciler: waiting orders', 'awaiting_operator_since is null'],
      ['reconciler: orders owed codes', 'codes_owed > 0'],
      ['reconciler: test restocks due', 'routing_step > 0'],
      ['webhook relay', 'set enqueued_at'],
      ['stock keeping: sales', 'delete from card_sales'],
      ['stock keeping: low stock', 'low_stock_threshold as threshold'],
      ['campaign sync', 'old_data'],
      ['balance watch', "from providers p where p.status = 'active'"],
      ['retention: tokens', 'from auth_tokens where least(expires_at, revoked_at)'],
      ['retention: keys', 'from idempotency_keys where created_at'],
      ['retention: webhook events', 'from webhook_events where created_at'],
      ['scrape: orders in initiate', 'oldest_seconds'],
      ['scrape: free codes', 'left join "card_codes" c'],
      ['scrape: low stock', 'low_stock_alerts as alerts'],
    ] as const) {
      expect(statements.some((statement) => statement.includes(fragment)), timer).toBe(true);
    }
  });
});
