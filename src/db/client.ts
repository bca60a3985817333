import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { secondsLeft } from '../lib/deadline.js';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;
export type Sql = postgres.Sql;
/** A drizzle transaction handle; domain functions take `Db | Tx` where they may run inside one. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

/** `close(deadline)` lets running queries finish until `deadline` (epoch ms), then drops the connections. */
export type Database = { db: Db; sql: Sql; close: (deadline?: number) => Promise<void> };

/**
 * drizzle sends its queries unnamed, so PostgreSQL parses and plans every one of them again
 * (measured: most of an order's database time). This view of the client asks postgres.js to
 * prepare them, also inside transactions; statements are cached per connection by their text.
 */
function preparing(sql: Sql): Sql {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (query: string, params?: unknown[], options?: object) =>
          target.unsafe(query, params as never, { ...options, prepare: true });
      }
      if (property === 'begin' || property === 'savepoint') {
        return (...args: unknown[]) => {
          const body = args.pop() as (tx: Sql) => unknown;
          const original = Reflect.get(target, property, target) as (...a: unknown[]) => unknown;
          return original.call(target, ...args, (tx: Sql) => body(preparing(tx)));
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * Statements built once per database handle. drizzle builds a query's SQL again on every execution (a fifth of an
 * order list's CPU under `node --cpu-prof`); a prepared one keeps its SQL and takes only the values
 * (`sql.placeholder`). For the hot reads that run outside transactions.
 */
export function builtOnce<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let statements = built.get(db);
    if (!statements) built.set(db, (statements = build(db)));
    return statements;
  };
}

/** `applicationName` tells the processes apart in pg_stat_activity. */
export function connectDatabase(url: string, max = 16, applicationName = 'topup-store'): Database {
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    // While PostgreSQL is away, requests fail (503) within seconds instead of queueing for half a minute.
    connect_timeout: 5,
    // Reconnect quickly after a failover: postgres.js's own backoff grows with every failure of any
    // connection of the pool, up to 20 s, which left requests waiting that long after a burst of terminations.
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    // Timestamps come back as PostgreSQL text in UTC, which keeps their microseconds.
    connection: { TimeZone: 'UTC', application_name: applicationName },
  });
  const db = drizzle(preparing(sql), { schema });
  return { db, sql, close: (deadline = Date.now() + 5000) => sql.end({ timeout: secondsLeft(deadline) }) };
}
