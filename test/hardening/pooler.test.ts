/**
 * Through a real PgBouncer in transaction mode (C21): a transaction whose COMMIT did not commit is never reported
 * as committed, and with DATABASE_PREPARED_STATEMENTS=false the service works there unchanged.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Sql } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { createCard } from '../helpers/fixtures.js';
import { createTestDatabase, startTestApp, type TestApp } from '../helpers/harness.js';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { emptyDatabase } from '../helpers/migrations.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { sleep } from '../helpers/processes.js';
import { createBuyer, placeCardOrder, stockCodes, waitFor } from '../workers/support.js';

let bouncer: PgBouncer;
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  database = await createTestDatabase();
  const server = new URL(database.url);
  // A small pool: concurrent transactions share few server connections, as under load in production.
  bouncer = await startPgBouncer({ host: server.hostname, port: Number(server.port) }, { poolSize: 4 });
});
afterAll(async () => {
  await bouncer?.stop();
  await database?.drop();
});

describe('a transaction pooler between the service and PostgreSQL', () => {
  it('a COMMIT answered ROLLBACK is an error: every transaction reported committed left its row, and only those', async () => {
    // The driver's default, named statements, is what loses work here: a transaction's statement named on one
    // server connection fails on another (26000), the driver retries it inside the aborted transaction, and
    // PostgreSQL answers its COMMIT with ROLLBACK and no error.
    const sql = postgres(bouncer.through(database.url), { max: 16, prepare: true, onnotice: () => {} });
    try {
      await sql`create table pooled (n int primary key)`;
      const outcomes = await Promise.all(
        Array.from({ length: 300 }, (_, n) =>
          sql
            .begin(async (tx) => {
              await tx`insert into pooled (n) values (${n})`;
              await tx`select count(*) from pooled where n = ${n}`;
            })
            .then(
              () => ({ n, committed: true, code: null }),
              (err: { code?: string }) => ({ n, committed: false, code: err.code ?? null }),
            ),
        ),
      );
      const rows = new Set((await sql<{ n: number }[]>`select n from pooled`).map((r) => r.n));
      const reportedButMissing = outcomes.filter((o) => o.committed && !rows.has(o.n)).length;
      const storedButFailed = outcomes.filter((o) => !o.committed && rows.has(o.n)).length;
      expect({ reportedButMissing, storedButFailed }).toEqual({ reportedButMissing: 0, storedButFailed: 0 });
      // The hazard was there: some transactions did not commit, and said so.
      const failures = outcomes.filter((o) => !o.committed);
      expect(failures.length).toBeGreaterThan(0);
      expect(new Set(failures.map((f) => f.code))).toSatisfy((codes: Set<string | null>) =>
        [...codes].every((code) => code === '26000' || code === 'COMMIT_ROLLED_BACK'),
      );
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it('with DATABASE_PREPARED_STATEMENTS=false, a failing query does not derail the queries sent after it on its connection', async () => {
    // PgBouncer gives the server connection away at the first ReadyForQuery; a query the driver had pipelined
    // behind a failing one was left without its answer (the connection hung) or read another client's.
    const clients = Array.from({ length: 6 }, () => connectDatabase(bouncer.through(database.url), { max: 1, prepare: false }));
    try {
      const rounds = (sql: Sql, client: number) =>
        (async () => {
          const wrong: string[] = [];
          for (let round = 0; round < 25; round++) {
            await Promise.all([
              sql`select 1/0`.catch((err: { code?: string }) => err.code === '22012' || wrong.push(`division answered ${err.code}`)),
              sql`select ${new Date().toISOString()}::timestamptz as at`,
              ...[1, 2, 3].map(async (k) => {
                const n = client * 1000 + round * 10 + k;
                const [row] = await sql<{ n: number }[]>`select ${n}::int as n`;
                if (row!.n !== n) wrong.push(`asked ${n}, read ${row!.n}`);
              }),
            ]);
          }
          return wrong;
        })();
      const all = Promise.all(clients.map((c, i) => rounds(c.sql, i)));
      const outcome = await Promise.race([all, sleep(20_000).then(() => 'hung' as const)]);
      expect(outcome).not.toBe('hung');
      expect((outcome as string[][]).flat()).toEqual([]);
    } finally {
      await Promise.all(clients.map((c) => c.close(Date.now() + 1000)));
    }
  });

  it('migrations through the pooler hold their lock in a transaction: two at once both succeed', async () => {
    const fresh = await emptyDatabase();
    try {
      await Promise.all([migrateDatabase(bouncer.through(fresh.url)), migrateDatabase(bouncer.through(fresh.url))]);
      const sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
      const [row] = await sql<{ tables: boolean }[]>`select to_regclass('public.orders') is not null as tables`;
      // The indexes built after the migrations (CREATE INDEX CONCURRENTLY) are there once, and valid.
      const built = await sql<{ name: string; valid: boolean }[]>`
        select c.relname as name, i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
        where c.relname in ('auth_tokens_ended_idx', 'webhook_events_created_idx') order by c.relname`;
      await sql.end({ timeout: 5 });
      expect(row!.tables).toBe(true);
      expect(built).toEqual([
        { name: 'auth_tokens_ended_idx', valid: true },
        { name: 'webhook_events_created_idx', valid: true },
      ]);
    } finally {
      await fresh.drop();
    }
  });
});

describe('the service behind PgBouncer with DATABASE_PREPARED_STATEMENTS=false', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ workers: true, env: { DATABASE_PREPARED_STATEMENTS: 'false' }, serviceDatabaseUrl: (url) => bouncer.through(url) });
  });
  afterAll(() => app?.close());

  it('places and fulfils concurrent orders with no error and every invariant held', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }, { price: '2.00' }] });
    const [a, b] = card.services.map((s) => s.id) as [number, number];
    await stockCodes(app, a, 120);
    await stockCodes(app, b, 20);
    const buyers = await Promise.all(Array.from({ length: 6 }, () => createBuyer(app, '500.00')));
    // Order lists (statements built once) and transactions (fulfilment, restock) all pass through the pooler.
    const utrs = await Promise.all(Array.from({ length: 120 }, (_, i) => placeCardOrder(buyers[i % buyers.length]!, [[i % 3 ? a : b, 1]])));
    await waitFor(
      'every order to move on',
      async () => {
        const [row] = await app.services.sql<{ waiting: number }[]>`select count(*)::int as waiting from orders where status = 0`;
        return row!.waiting === 0;
      },
      60_000,
    );
    for (const buyer of buyers) expect((await buyer.api.get('/api/get-card/orders?per_page=100')).status).toBe(200);
    expect(violations(await checkInvariants(app.services.sql, utrs))).toEqual(NO_VIOLATIONS);
  });
});
