import { fillPlaceholders, type Placeholder, sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { batcher, type BatchOptions } from '../lib/batch.js';
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
 * (measured: most of an order's database time), except those built with `.prepare(name)`, which it always
 * names. This view of the client makes every drizzle query follow `prepare`, also inside transactions: named
 * and cached per connection by their text where statements may be prepared, never named behind a transaction
 * pooler (C21), where a statement prepared on one server connection is missing on the next.
 */
function preparedStatements(sql: Sql, prepare: boolean): Sql {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (query: string, params?: unknown[], options?: object) => target.unsafe(query, params as never, { ...options, prepare });
      }
      if (property === 'begin' || property === 'savepoint') {
        return (...args: unknown[]) => {
          const body = args.pop() as (tx: Sql) => unknown;
          const original = Reflect.get(target, property, target) as (...a: unknown[]) => unknown;
          return original.call(target, ...args, (tx: Sql) => body(preparedStatements(tx, prepare)));
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

const dialect = new PgDialect();

/** The text of `template` with its `slot(name)` values numbered $1 … $n in order, and the values (placeholders among them). */
function renderOnce<V extends string>(template: (slot: (name: V) => Placeholder<V>) => SQL) {
  const { sql: text, params } = dialect.sqlToQuery(template((name) => sql.placeholder(name)));
  // The rendered text numbers its parameters $1 … $n in order; anything else would misplace the values.
  const numbers = [...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
  if (numbers.length !== params.length || numbers.some((n, i) => n !== i + 1)) throw new Error('a built statement must not hold a "$" of its own');
  return { text, params };
}

/** The driver under a database handle or a transaction: drizzle's session client, itself the view of preparedStatements. */
const driverOf = (db: DbOrTx): Sql => (db._.session as unknown as { client: Sql }).client;

/**
 * A statement whose text drizzle builds once: `template` writes it with `slot(name)` wherever a call's values go, and
 * the function returned runs it with `values` on a database handle or a transaction, straight through the driver
 * (named where statements may be prepared, see preparedStatements), rows as the driver reads them (JSON parsed,
 * column names as written). drizzle building the text again on every call was a tenth of the API's CPU under
 * placement, and rendering it again for `db.execute` (checking every chunk) still 6–8% of it.
 */
export function builtStatement<V extends string, R = Record<string, unknown>>(
  template: (slot: (name: V) => Placeholder<V>) => SQL,
): (db: DbOrTx, values: Record<V, unknown>) => Promise<R[]> {
  const { text, params } = renderOnce(template);
  return (db, values) => driverOf(db).unsafe(text, fillPlaceholders(params, values) as never[]) as unknown as Promise<R[]>;
}

/**
 * A hot read that concurrent callers share: the items asked for while a statement is running go together in the
 * next one (`batcher`), so a busy process sends one statement for many requests instead of one each, and each caller
 * still reads after it asked. `template` reads every item of `valuesOf(items)` (arrays, one element per item) and
 * returns one row per item in the order given (`unnest(…) with ordinality`, ordered by it). Built once per database
 * handle; reads outside transactions.
 */
export function batchedRead<Item, R, V extends string>(
  template: (slot: (name: V) => Placeholder<V>) => SQL,
  valuesOf: (items: Item[]) => Record<V, unknown>,
  options: BatchOptions,
): (db: Db) => (item: Item) => Promise<R> {
  const read = builtStatement<V, R>(template);
  return builtOnce((db) =>
    batcher<Item, R>(async (items) => {
      const rows = await read(db, valuesOf(items));
      if (rows.length !== items.length) throw new Error(`a batched read answered ${rows.length} rows for ${items.length} items`);
      return rows.map((row) => ({ status: 'fulfilled', value: row }));
    }, options),
  );
}

/**
 * The driver's statement options. With `prepare`, named statements and pipelined queries (the fast path on a direct
 * connection); without, what holds behind a transaction pooler: no named statement, and one query at a time per
 * connection (PgBouncer 1.18 hands the server connection to another client at the first ReadyForQuery, so a query
 * pipelined behind one that failed hangs or reads another client's answers: pgbouncer/pgbouncer#759).
 * `max_pipeline` is a driver option its type declarations leave out.
 */
export const statementOptions = (prepare: boolean) => ({ prepare, ...({ max_pipeline: prepare ? 100 : 0 } as object) });

export type ConnectOptions = {
  /** Connections in the pool. */
  max?: number;
  /**
   * Named server-side statements and pipelined queries (DATABASE_PREPARED_STATEMENTS); both off behind a
   * transaction pooler (C21).
   */
  prepare?: boolean;
  /** Tells the processes apart in pg_stat_activity. */
  applicationName?: string;
  /** Sees every statement sent, with its values (the query-plan checks record them to EXPLAIN them). */
  onQuery?: (query: string, params: readonly unknown[]) => void;
};

/**
 * A pool of connections to `url`. Nothing relies on session state (C21): advisory locks are transaction-scoped
 * and settings are `set_config(…, true)`, so a transaction pooler may hand each transaction another server
 * connection. The session parameters below are startup parameters, which PgBouncer keeps per client.
 */
export function connectDatabase(url: string, { max = 16, prepare = true, applicationName = 'topup-store', onQuery }: ConnectOptions = {}): Database {
  const sql = postgres(url, {
    max,
    ...(onQuery ? { debug: (_connection: number, query: string, params: unknown[]) => onQuery(query, params) } : {}),
    ...statementOptions(prepare),
    onnotice: () => {},
    // While PostgreSQL is away, requests fail (503) within seconds instead of queueing for half a minute.
    connect_timeout: 5,
    // Reconnect quickly after a failover: postgres.js's own backoff grows with every failure of any
    // connection of the pool, up to 20 s, which left requests waiting that long after a burst of terminations.
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    // Timestamps come back as PostgreSQL text in UTC, which keeps their microseconds.
    connection: { TimeZone: 'UTC', application_name: applicationName },
  });
  const db = drizzle(preparedStatements(sql, prepare), { schema });
  return { db, sql, close: (deadline = Date.now() + 5000) => sql.end({ timeout: secondsLeft(deadline) }) };
}
