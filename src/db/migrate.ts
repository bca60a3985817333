import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { statementOptions } from './client.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Creates the database named in `url` when it does not exist yet (connects to `postgres`). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const sql = postgres(maintenance.toString(), { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const [row] = await sql`select 1 as present from pg_database where datname = ${name}`;
    if (!row) {
      await sql.unsafe(`create database "${name.replaceAll('"', '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const MIGRATION_LOCK = 7_301_001;

/**
 * Indexes added to tables that may be large by then, built without holding back their writes: CREATE INDEX
 * CONCURRENTLY, which cannot run inside the migrations' transaction. schema.ts declares them too, so drizzle-kit
 * knows them. A build that was cut off leaves an invalid index, which is dropped and built again.
 */
const ONLINE_INDEXES = [
  { name: 'auth_tokens_ended_idx', definition: 'on "auth_tokens" using btree (least("expires_at", "revoked_at"))' },
  { name: 'webhook_events_created_idx', definition: 'on "webhook_events" using btree ("created_at", "id")' },
  { name: 'order_lines_waiting_idx', definition: 'on "order_lines" using btree ("card_service_id", "order_id") where "codes_owed" > 0 and "waiting"' },
  // Fulfilment's walk for free codes starts from it (a large card_codes read without it at every assignment): a process
  // starting while another builds it waits for that build.
  { name: 'card_codes_taken_idx', definition: 'on "card_codes" using btree ("card_service_id", "id") where "order_line_id" is not null and "livemode"', awaited: true },
];

/**
 * Every process that starts builds what is missing, without a lock (a session lock would not hold through a
 * transaction pooler): a build or a drop another process has in progress is left to it (waited for, for an index
 * marked `awaited`, which a query of the service must not run without), and a build that was cut off
 * (an invalid index nobody is working on) is dropped and started again. Two processes starting together may both try:
 * the one that loses (an existing name, PostgreSQL breaking the two builds' deadlock, or the catalog row the other
 * changed first) looks again.
 */
async function buildOnlineIndexes(sql: postgres.Sql): Promise<void> {
  for (const { name, definition, awaited = false } of ONLINE_INDEXES) {
    for (let attempt = 1; ; attempt++) {
      // The progress view shows a build once it has started; the statement of another session shows it (and a drop)
      // from its first moment, when the index is already in the catalog and still invalid.
      const [index] = await sql<{ valid: boolean; busy: boolean }[]>`
        select i.indisvalid as valid,
          exists (select 1 from pg_stat_progress_create_index p where p.index_relid = c.oid)
          or exists (select 1 from pg_stat_activity a
                     where a.datid = (select oid from pg_database where datname = current_database())
                       and a.pid <> pg_backend_pid() and a.state = 'active' and a.query like ${`%index concurrently%"${name}"%`}) as busy
        from pg_class c join pg_index i on i.indexrelid = c.oid
        where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`;
      if (index?.valid) break;
      if (index?.busy) {
        if (!awaited) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
        attempt = 0; // waiting is no attempt
        continue;
      }
      try {
        if (index) await sql.unsafe(`drop index concurrently if exists "${name}"`);
        await sql.unsafe(`create index concurrently if not exists "${name}" ${definition}`);
      } catch (err) {
        if (attempt >= 5 || !lostRace(err)) throw err;
      }
    }
  }
}

/** An error of a statement that lost a race with the same statement of another process starting at the same time. */
function lostRace(err: unknown): boolean {
  const { code, message } = err as { code?: string; message?: string };
  return ['42P07', '23505', '40P01'].includes(code ?? '') || (code === 'XX000' && message === 'tuple concurrently updated');
}

/**
 * Checks added NOT VALID by a migration (new rows are checked from then on), validated here on the rows already there:
 * VALIDATE CONSTRAINT scans the table under a lock that lets its reads and writes go on. A table whose old rows break
 * the check keeps it NOT VALID, and the start says so (`what` names the rows) rather than refusing to run.
 */
const LATE_CHECKS = [{ table: 'order_lines', name: 'order_lines_codes_owed_ck', what: 'order lines were dealt more codes than they owed (codes_owed below 0)' }];

async function validateLateChecks(sql: postgres.Sql): Promise<string[]> {
  const warnings: string[] = [];
  for (const { table, name, what } of LATE_CHECKS) {
    const [check] = await sql<{ valid: boolean }[]>`
      select convalidated as valid from pg_constraint where conname = ${name} and connamespace = current_schema()::regnamespace`;
    if (!check || check.valid) continue;
    try {
      await sql.unsafe(`alter table "${table}" validate constraint "${name}"`);
    } catch (err) {
      // Validated by another process starting at the same time: nothing left to do.
      if (lostRace(err)) continue;
      if ((err as { code?: string }).code !== '23514') throw err;
      warnings.push(`${name}: some ${what}; the check holds for new rows only until they are repaired`);
    }
  }
  return warnings;
}

/**
 * Applies the committed migrations so that an API and a worker process starting together do not race each
 * other: one connection holds an advisory lock in an open transaction while the other migrates. The lock is
 * transaction-scoped and no statement is named, so this holds through a transaction pooler too (C21), although
 * DATABASE_MIGRATION_URL is meant to be a direct connection. Returns what the start should warn of (see LATE_CHECKS).
 */
export async function migrateDatabase(url: string): Promise<string[]> {
  const sql = postgres(url, { max: 2, ...statementOptions(false), onnotice: () => {}, connect_timeout: 10 });
  try {
    await sql.begin(async (lock) => {
      await lock`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
    });
    await buildOnlineIndexes(sql);
    return await validateLateChecks(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
