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
];

const ONLINE_INDEX_LOCK = 7_301_010;

/**
 * One process at a time (another one's build in progress looks invalid too), under a session lock taken by a
 * statement of its own: a lock held in an open transaction would keep a snapshot the builds wait for.
 */
async function buildOnlineIndexes(sql: postgres.Sql): Promise<void> {
  const holder = await sql.reserve();
  try {
    await holder`select pg_advisory_lock(${ONLINE_INDEX_LOCK})`;
    for (const { name, definition } of ONLINE_INDEXES) {
      const [index] = await sql<{ valid: boolean }[]>`
        select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
        where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`;
      if (index?.valid) continue;
      if (index) await sql.unsafe(`drop index concurrently if exists "${name}"`);
      await sql.unsafe(`create index concurrently if not exists "${name}" ${definition}`);
    }
  } finally {
    await holder`select pg_advisory_unlock(${ONLINE_INDEX_LOCK})`;
    holder.release();
  }
}

/**
 * Applies the committed migrations so that an API and a worker process starting together do not race each
 * other: one connection holds an advisory lock in an open transaction while the other migrates. The lock is
 * transaction-scoped and no statement is named, so this holds through a transaction pooler too (C21), although
 * DATABASE_MIGRATION_URL is meant to be a direct connection.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const sql = postgres(url, { max: 2, ...statementOptions(false), onnotice: () => {}, connect_timeout: 10 });
  try {
    await sql.begin(async (lock) => {
      await lock`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
    });
    await buildOnlineIndexes(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
