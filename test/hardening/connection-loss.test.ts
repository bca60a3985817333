import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { categories } from '../../src/db/schema.js';
import { createTestDatabase } from '../helpers/harness.js';
import { waitFor } from '../workers/support.js';

/**
 * A database connection lost half-way through an answer (a backend terminated by a failover, a restart or an
 * operator) must leave nothing of that answer behind: the queries that follow on the reconnected connection are
 * answered with their own rows, all of them. (postgres.js kept what it had half-read for the connection that replaced
 * it: the next query failed with the old error, or its rows landed after empty slots, so a lookup of a row that
 * exists read as "not found". This test loses the answer mid-rows; the empty slots also need the loss to land during
 * the new connection's start, which only the fault suite's terminations reach.)
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let client: Database;
let admin: Database;
beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so the query after the loss runs on the very connection that lost its answer.
  client = connectDatabase(database.url, { max: 1, applicationName: 'topup-connection-loss' });
  admin = connectDatabase(database.url, { max: 1, applicationName: 'topup-connection-loss-admin' });
});
afterAll(async () => {
  await client?.close();
  await admin?.close();
  await database?.drop();
});

/** Starts a query whose rows trickle in, and terminates its backend once some of them have arrived. */
async function loseConnectionMidAnswer(): Promise<void> {
  let received = 0;
  const slow = client.sql`select g, pg_sleep(0.002) from generate_series(1, 5000) g`.forEach(() => void (received += 1));
  const outcome = slow.then(
    () => 'finished',
    () => 'lost',
  );
  await waitFor('some rows of the slow answer', async () => received > 10);
  await admin.sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'topup-connection-loss'`;
  expect(await outcome).toBe('lost');
}

describe('a connection lost mid-answer', () => {
  it('leaves the next queries their own rows', async () => {
    await admin.db.insert(categories).values({ name: 'Connection loss', icon: 'loss.png', type: 'card' });
    for (let round = 0; round < 3; round++) {
      await loseConnectionMidAnswer();
      // Through drizzle, as every lookup of the service reads.
      const found = await client.db.select({ icon: categories.icon }).from(categories).where(eq(categories.name, 'Connection loss'));
      expect(found).toEqual([{ icon: 'loss.png' }]);
      const raw = await client.sql`select 1 as one`;
      expect([...raw]).toEqual([{ one: 1 }]);
    }
  });
});
