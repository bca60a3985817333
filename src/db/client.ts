import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;
export type Sql = postgres.Sql;
/** A drizzle transaction handle; domain functions take `Db | Tx` where they may run inside one. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export type Database = { db: Db; sql: Sql; close: () => Promise<void> };

export function connectDatabase(url: string, max = 16): Database {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    // Timestamps come back as PostgreSQL text in UTC, which keeps their microseconds.
    connection: { TimeZone: 'UTC', application_name: 'topup-store' },
  });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}
