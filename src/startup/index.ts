import { resolve } from 'node:path';
import type { Redis } from 'ioredis';
import postgres from 'postgres';
import { connectDatabase, statementOptions } from '../db/client.js';
import { ensureDatabase, migrateDatabase } from '../db/migrate.js';
import { ConfigError, generateCodeEncryptionKey, parseEnv, readCodeEncryptionKey, withKey, type Config, type Env } from '../core/env.js';
import type { ServiceOptions, Services } from '../runtime/services.js';
import { adoptCodeKey, storedKeyFingerprint } from '../modules/inventory/code-key.js';
import type { LogDestination, Logger } from '../lib/logger.js';
import { connectRedis, describeTarget, infoRefused, misplacedServer, targetVariable, writeProbe, type RedisTarget } from '../lib/redis.js';
import { createServices } from '../runtime/services.js';
import { storeGauges } from './gauges.js';

/** A problem that stops the process at start, said in one line naming the variable (C20). */
export class StartupError extends Error {}

/** Where a PostgreSQL URL points, as a start-up line names it. */
const databaseAddress = (url: string) => {
  const target = new URL(url);
  return `${target.hostname}:${target.port || 5432}`;
};

/** How a connection failure reads in that one line: where it tried to connect (`host:port`), and why it could not. */
export function describeConnectionError(where: string, err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to ${where} (connection refused)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the host of ${where}`;
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return `cannot connect to ${where} (timed out)`;
    case '28P01':
    case '28000':
      return `${where} refused the credentials (${message})`;
    case '3D000':
      return `${message} on ${where}: run \`npm run db:migrate\` (or \`npm start\`) to create it`;
    default:
      return `cannot use ${where}: ${message ?? String(err)}`;
  }
}

async function atStart<T>(variable: string, where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(`${variable}: ${describeConnectionError(where, err)}`);
  }
}

/**
 * Redis takes a write within a few seconds where the queues' keys live, or the start fails naming the variable
 * that points at it (C21): a replica, a sentinel or a cluster node given as REDIS_URL is named as such.
 */
async function requireRedis(target: RedisTarget, prefix: string): Promise<void> {
  const redis = connectRedis(target, 'probe');
  const variable = targetVariable(target);
  let lastError: unknown;
  redis.on('error', (err) => (lastError = err));
  try {
    await atStart(variable, describeTarget(target), async () => {
      await redis.connect().catch((err) => {
        const cause = (lastError as { lastNodeError?: unknown })?.lastNodeError ?? lastError ?? err;
        // The client's ready check asks INFO: a server that refuses it is named as such, not as one that cannot be used.
        const refused = infoRefused(cause);
        throw refused ? new StartupError(`${variable}: ${describeTarget(target)} ${refused}`) : cause;
      });
      const misplaced = target.kind === 'server' ? await misplacedServer(redis as Redis) : null;
      if (misplaced) throw new StartupError(`${variable}: ${describeTarget(target)} ${misplaced}`);
      await writeProbe(redis, prefix);
    });
  } finally {
    redis.disconnect();
  }
}

/** Operator tools use the database as it is: one that is missing or not migrated is an error, never created. */
async function requireMigratedDatabase(url: string, variable: string): Promise<void> {
  const sql = postgres(url, { max: 1, ...statementOptions(false), onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql<{ migrated: boolean }[]>`select to_regclass('public.orders') is not null as migrated`;
    if (!row?.migrated) {
      throw new StartupError(`${variable}: the database has no tables yet: run \`npm run db:migrate\` (or \`npm start\`) first`);
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * The key that seals card codes (C20): from the environment or its file; generated only for a database
 * that holds no fingerprint yet (`created` then); refused when it is not the key that sealed the stored codes.
 */
async function resolveCodeKey(env: Env): Promise<{ key: Buffer; created: boolean }> {
  const database = connectDatabase(env.DATABASE_URL, { max: 1, prepare: env.DATABASE_PREPARED_STATEMENTS });
  try {
    const [server] = await database.sql<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
    if (server?.standby) {
      throw new StartupError(`DATABASE_URL: ${databaseAddress(env.DATABASE_URL)} is a standby (read-only): point it at the primary`);
    }
    const found = readCodeEncryptionKey(env);
    if (!found) {
      const stored = await storedKeyFingerprint(database.db);
      if (stored) {
        throw new StartupError(
          `CODE_ENCRYPTION_KEY_FILE: ${env.CODE_ENCRYPTION_KEY_FILE} is missing, but the stored card codes are sealed with the key ${stored}: restore the file or set CODE_ENCRYPTION_KEY`,
        );
      }
    }
    const generated = found ? null : generateCodeEncryptionKey(env);
    const key = found?.key ?? generated!.key;
    const check = await adoptCodeKey(database.db, key);
    if (!check.ok) {
      const variable = found?.source ?? 'CODE_ENCRYPTION_KEY_FILE';
      throw new StartupError(
        `${variable}: the key ${check.presented} is not the key that sealed the stored card codes (${check.stored}); start with the original key`,
      );
    }
    return { key, created: generated?.created ?? false };
  } finally {
    await database.close();
  }
}

export type BootstrapOptions = {
  /** The service and `db:migrate` create and migrate the database; operator tools never do. */
  prepareDatabase: boolean;
  /** Told the path of CODE_ENCRYPTION_KEY_FILE when this start generated it, so the operator can be asked to back it up. */
  onKeyFileCreated?: (file: string) => void;
  /** The variables to read instead of the process's own (an operator command run inside another program). */
  env?: Record<string, string | undefined>;
} & Pick<ServiceOptions, 'logDestination'>;

/** Every entry point starts the same way: configuration, database, Redis, the code key, then connections. */
export async function bootstrap({ prepareDatabase, onKeyFileCreated, logDestination, env: source }: BootstrapOptions): Promise<Services> {
  let env: Env;
  try {
    env = parseEnv(source);
  } catch (err) {
    throw err instanceof ConfigError ? new StartupError(err.message) : err;
  }
  // Migrations and the schema check need a session: the direct connection when the service goes through a pooler.
  const [migrationVariable, migrationUrl] = env.DATABASE_MIGRATION_URL
    ? ['DATABASE_MIGRATION_URL', env.DATABASE_MIGRATION_URL]
    : ['DATABASE_URL', env.DATABASE_URL];
  await atStart(migrationVariable, databaseAddress(migrationUrl), async () => {
    if (prepareDatabase) {
      await ensureDatabase(migrationUrl);
      // Before any logger exists: one plain line each, as the start's other messages.
      for (const warning of await migrateDatabase(migrationUrl)) process.stderr.write(`${warning}\n`);
    } else {
      await requireMigratedDatabase(migrationUrl, migrationVariable);
    }
  });
  await requireRedis(env.redis, env.BULLMQ_PREFIX);
  let config: Config;
  try {
    const { key, created } = await atStart('DATABASE_URL', databaseAddress(env.DATABASE_URL), () => resolveCodeKey(env));
    config = withKey(env, key);
    if (created) onKeyFileCreated?.(resolve(env.CODE_ENCRYPTION_KEY_FILE));
  } catch (err) {
    throw err instanceof ConfigError ? new StartupError(err.message) : err;
  }
  return createServices(config, storeGauges, { logDestination });
}

/**
 * Runs an entry point's start. A StartupError is printed as its one line; anything else unexpected at
 * start is one line too (no stack trace). Either way the process exits with code 1.
 */
export async function startOrExit<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    process.stderr.write(`${startFailureLine(err)}\n`);
    process.exit(1);
  }
}

/** The one line a failed start is told in: a StartupError's own, anything else prefixed, never a stack trace. */
const startFailureLine = (err: unknown): string =>
  err instanceof StartupError ? err.message : `start failed: ${err instanceof Error ? err.message : String(err)}`;

/**
 * The services an operator command runs on (`npm run cli`, or a program running one inside itself): the database as
 * it is, never created or migrated, the log lines to `logs` at LOG_LEVEL or else `warn` (an operator wants the
 * command's answer, not the info lines of the services it calls). A start that fails rejects with its one line.
 */
export function startForCommand(logs: LogDestination, env: Record<string, string | undefined>): Promise<Services> {
  return bootstrap({ prepareDatabase: false, logDestination: logs, env: { ...env, LOG_LEVEL: env.LOG_LEVEL || 'warn' } }).catch((err: unknown) => {
    throw new Error(startFailureLine(err));
  });
}

/**
 * An error nobody caught ends the process (its state can no longer be trusted), but as one log line with
 * the cause, so the supervisor's restart is explained.
 */
export function exitOnUncaught(logger: Logger): void {
  const fatal = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, kind);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled promise rejection'));
}

/**
 * A Ctrl-C reaches `npm start` twice: the terminal signals the whole foreground group, and npm passes its own copy
 * on. Copies this close together are one request to stop.
 */
const SAME_SIGINT_MS = 300;

/**
 * SIGTERM or SIGINT runs `stop` once (C20): it gets a deadline `timeoutMs` away and should finish by it;
 * at the deadline the process exits anyway, so an unreachable PostgreSQL or Redis never holds it. Work
 * left unfinished (a job mid-way) is picked up again elsewhere: every job handler is idempotent.
 * A second signal exits at once (not the copy of the same Ctrl-C). The function returned starts the same shutdown
 * without a signal (a worker process whose API process has gone); it does nothing once one has begun. Every line
 * goes to the JSON log.
 */
export function onShutdown(logger: Logger, timeoutMs: number, stop: (deadline: number) => Promise<void>): (reason: string) => void {
  let stopping = false;
  let firstSignal: { signal: NodeJS.Signals; at: number } | null = null;
  const begin = (reason: string) => {
    stopping = true;
    logger.info({ reason, timeoutMs }, 'shutting down');
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => {
      logger.warn({ timeoutMs }, 'shutdown deadline reached, exiting');
      process.exit(0);
    }, timeoutMs);
    stop(deadline).then(
      () => process.exit(0),
      (err) => {
        clearTimeout(timer);
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (signal === 'SIGINT' && firstSignal?.signal === 'SIGINT' && Date.now() - firstSignal.at < SAME_SIGINT_MS) return;
      logger.warn({ signal }, 'signal received again, exiting now');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    firstSignal = { signal, at: Date.now() };
    begin(`${signal} received`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return (reason) => {
    if (!stopping) begin(reason);
  };
}
