import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { loadConfig } from '../../src/env.js';
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
    const used = new Set(plans.flatMap((plan) => plan.indexes));
    // The reconciler's scan may walk either index of waiting orders.
    expect(['orders_to_reconcile_idx', 'orders_status_idx'].some((index) => used.has(index))).toBe(true);
    for (const index of [
      'order_lines_card_service_owed_idx',
      'webhook_deliveries_due_idx',
      'webhook_deliveries_event_idx',
      'webhook_events_created_idx',
      'auth_tokens_ended_idx',
      'idempotency_keys_created_idx',
      'card_codes_available_idx',
    ]) {
      expect(used, index).toContain(index);
    }
  });
});
