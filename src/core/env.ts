import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { parseHostPorts, type RedisTarget } from '../lib/redis.js';
import { supplierUrlProblem } from '../lib/supplier-url.js';

/** Every setting the service reads from the environment, with working local defaults. */
const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const positiveInt = z.coerce
  .number({ error: 'must be a number' })
  .int({ error: 'must be a whole number' })
  .positive({ error: 'must be greater than 0' });

/** A URL of one of `schemes`, e.g. `postgres:` (a MySQL URL in DATABASE_URL is named as such at start). */
const urlOf = (...schemes: string[]) =>
  // A value that is no URL at all gets z.url()'s message only.
  z.url().refine((url) => !URL.canParse(url) || schemes.includes(new URL(url).protocol), {
    message: `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL`,
  });

const hostPorts = z.string().transform((value, ctx) => {
  const list = parseHostPorts(value);
  if (!list) ctx.addIssue({ code: 'custom', message: 'must be host:port entries separated by commas' });
  return list ?? [];
});

const EnvSchema = z.object({
  DATABASE_URL: urlOf('postgres:', 'postgresql:').default('postgres://postgres@127.0.0.1:5432/topup'),
  DATABASE_POOL_SIZE: positiveInt.default(16),
  /** Named server-side statements (fast on a direct connection); `false` behind a transaction pooler such as PgBouncer. */
  DATABASE_PREPARED_STATEMENTS: booleanFlag.default(true),
  /** A direct connection (no transaction pooler) for migrations and start-up checks; DATABASE_URL when unset. */
  DATABASE_MIGRATION_URL: urlOf('postgres:', 'postgresql:').optional(),
  // Redis (C21): exactly one of REDIS_URL (the default), REDIS_SENTINELS or REDIS_CLUSTER_NODES.
  REDIS_URL: urlOf('redis:', 'rediss:').default('redis://127.0.0.1:6379'),
  REDIS_SENTINELS: hostPorts.optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  REDIS_CLUSTER_NODES: hostPorts.optional(),
  /** The Redis servers' password with REDIS_SENTINELS or REDIS_CLUSTER_NODES (a REDIS_URL carries its own). */
  REDIS_PASSWORD: z.string().min(1).optional(),
  BULLMQ_PREFIX: z.string().min(1).default('topup'),
  PORT: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0).max(65535, { error: 'must be at most 65535' }).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_BASE_URL: z.url().optional(),
  /** Where the stored image paths are served from (a CDN, say); unset: this service's own /assets/. */
  ASSET_BASE_URL: urlOf('http:', 'https:').optional(),
  TOKEN_TTL_SECONDS: positiveInt.default(86400),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  CODE_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  CODE_ENCRYPTION_KEY_FILE: z.string().min(1).default('.data/code-encryption.key'),
  STORE_CURRENCY: z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO currency code').default('USD'),
  STORE_CURRENCY_SYMBOL: z.string().min(1).default('$'),
  REVIEWS_REQUIRE_APPROVAL: booleanFlag.default(false),
  MAX_QUANTITY_PER_LINE: positiveInt.default(100),
  AUTH_FAILURES_PER_KEY: positiveInt.default(10),
  AUTH_FAILURES_PER_IP: positiveInt.default(50),
  AUTH_FAILURE_WINDOW_SECONDS: positiveInt.default(900),
  LICENSE_VALIDATIONS_PER_KEY: positiveInt.default(60),
  LICENSE_VALIDATIONS_PER_IP: positiveInt.default(120),
  LICENSE_VALIDATION_WINDOW_SECONDS: positiveInt.default(60),
  ACCOUNT_REQUESTS_PER_MINUTE: positiveInt.optional(),
  TRUST_PROXY: booleanFlag.default(false),
  RUN_WORKERS: booleanFlag.default(true),
  /** The worker process `npm start` forks yields to its API process while that one is busy (fulfilment/pace.ts). */
  PLACEMENT_FIRST: booleanFlag.default(true),
  /** The niceness `npm start` gives its worker process: placement before fulfilment when they share the cores. */
  WORKER_NICE: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0).max(19, { error: 'must be at most 19' }).default(5),
  WORKER_CONCURRENCY: positiveInt.default(8),
  /** The fulfilment queue split in this many queues by order id (each its own slot on a cluster without a prefix hash tag). */
  QUEUE_SHARDS: positiveInt.max(64).default(1),
  /** The most deliveries of one webhook endpoint on their way at once: a slow receiver never takes the others' senders. */
  WEBHOOK_ENDPOINT_IN_FLIGHT: positiveInt.default(16),
  /** How long a worker holds a job's lock between renewals; a crashed worker's jobs run again after about this long. */
  JOB_LOCK_SECONDS: positiveInt.default(30),
  TOPUP_PROVIDER: z.enum(['manual', 'http']).default('manual'),
  /** The base URL of the TOPUP_PROVIDER=http provider (the `http` protocol's `{base_url}`). */
  TOPUP_PROVIDER_URL: z
    .string()
    .superRefine((value, ctx) => {
      const problem = supplierUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem.replace(/\.$/, '') });
    })
    .optional(),
  TOPUP_PROVIDER_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The delay of a top-up's first status query after a pending or unknown outcome; each later one doubles it, up to 10 minutes. */
  PROVIDER_STATUS_QUERY_MS: positiveInt.default(2000),
  /** An unknown provider outcome is settled by status queries and callbacks for this long, then waits for an operator (C22). */
  PROVIDER_SETTLE_HOURS: z.coerce.number({ error: 'must be a number' }).positive({ error: 'must be greater than 0' }).max(720).default(24),
  /** Consecutive unknown outcomes of one provider that open its circuit, and how long it stays open before a probe. */
  PROVIDER_CIRCUIT_FAILURES: positiveInt.default(5),
  PROVIDER_CIRCUIT_OPEN_SECONDS: positiveInt.default(30),
  /**
   * How long a page of an order list is served from the API process's memory at most, while no change to its orders
   * (or to the catalog they show) has been told since it was read; 0 reads every page from the database.
   */
  ORDER_PAGES_CACHE_MS: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0).max(60_000).default(5000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
  /**
   * After SIGTERM, how long the API keeps serving while /ready answers 503, so that a load balancer's health
   * checks take it out of rotation before its port closes (C21), and up to as long again while requests other than
   * probes still arrive (never more than half the time left before SHUTDOWN_TIMEOUT_MS).
   */
  SHUTDOWN_DRAIN_DELAY_MS: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0).default(0),
  /** Retention (C23): tokens are deleted this many days after they expired or were revoked. */
  TOKEN_RETENTION_DAYS: positiveInt.default(7),
  /** Webhook events, deliveries and attempts are deleted this many days after the event's last delivery finished. */
  WEBHOOK_RETENTION_DAYS: positiveInt.default(30),
  /** `GET /metrics` needs `Authorization: Bearer $METRICS_TOKEN` (C16); unset, it answers 404 on every port. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** `npm run worker` serves GET /metrics on this port (no other route); unset, a worker process serves nothing. */
  WORKER_METRICS_PORT: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1).max(65535, { error: 'must be at most 65535' }).optional(),
  /** Where operators get `stock.low` (C17), signed with ADMIN_WEBHOOK_SECRET (`whsec_…`). */
  ADMIN_WEBHOOK_URL: z.url().optional(),
  ADMIN_WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9+/=]{24,}$/, 'must be whsec_ followed by base64 (24+ characters)').optional(),
  /** Lets webhook endpoints use http and private or loopback addresses: for tests and local receivers only. */
  WEBHOOK_ALLOW_PRIVATE: booleanFlag.default(false),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema> & {
  /** Where Redis is, from whichever of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES is set. */
  redis: RedisTarget;
};

export type Config = Omit<Env, 'CODE_ENCRYPTION_KEY'> & {
  /** 32-byte AES key for card codes at rest. Never logged. */
  codeEncryptionKey: Buffer;
};

/** A configuration problem: one line per variable, `NAME: what is wrong`. */
export class ConfigError extends Error {}

/** Parses the environment; a wrong value throws a ConfigError naming the variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  // Empty strings count as unset so `FOO=` in a .env file falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = EnvSchema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  }
  const env = { ...result.data, redis: redisTarget(result.data, 'REDIS_URL' in cleaned) };
  if (env.TOPUP_PROVIDER === 'http' && (!env.TOPUP_PROVIDER_URL || !env.TOPUP_PROVIDER_SECRET)) {
    throw new ConfigError('TOPUP_PROVIDER_URL, TOPUP_PROVIDER_SECRET: required when TOPUP_PROVIDER=http');
  }
  if (env.SHUTDOWN_DRAIN_DELAY_MS >= env.SHUTDOWN_TIMEOUT_MS) {
    throw new ConfigError('SHUTDOWN_DRAIN_DELAY_MS: must be less than SHUTDOWN_TIMEOUT_MS, which it is part of');
  }
  if (env.ADMIN_WEBHOOK_URL && !env.ADMIN_WEBHOOK_SECRET) {
    throw new ConfigError('ADMIN_WEBHOOK_SECRET: required when ADMIN_WEBHOOK_URL is set');
  }
  return env;
}

/** C21: exactly one way to Redis; on a cluster every queue's keys must share a slot (a hash tag in the prefix). */
function redisTarget(env: z.infer<typeof EnvSchema>, urlGiven: boolean): RedisTarget {
  const given = [urlGiven && 'REDIS_URL', env.REDIS_SENTINELS && 'REDIS_SENTINELS', env.REDIS_CLUSTER_NODES && 'REDIS_CLUSTER_NODES'].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`${given.join(', ')}: set only one of them`);
  const password = env.REDIS_PASSWORD;
  if (env.REDIS_SENTINELS) {
    if (!env.REDIS_SENTINEL_NAME) throw new ConfigError("REDIS_SENTINEL_NAME: required with REDIS_SENTINELS (the master's name)");
    return { kind: 'sentinel', sentinels: env.REDIS_SENTINELS, name: env.REDIS_SENTINEL_NAME, sentinelPassword: env.REDIS_SENTINEL_PASSWORD, password };
  }
  if (env.REDIS_SENTINEL_NAME || env.REDIS_SENTINEL_PASSWORD) throw new ConfigError('REDIS_SENTINELS: required with REDIS_SENTINEL_NAME');
  // On a cluster, a BULLMQ_PREFIX with a {hash tag} keeps every queue in its slot; without one each queue gets its own
  // (queues/index.ts queueLayout), so the masters share the queues.
  if (env.REDIS_CLUSTER_NODES) {
    return { kind: 'cluster', nodes: env.REDIS_CLUSTER_NODES, password };
  }
  if (password) throw new ConfigError('REDIS_PASSWORD: only with REDIS_SENTINELS or REDIS_CLUSTER_NODES (put the password in REDIS_URL)');
  return { kind: 'server', url: env.REDIS_URL };
}

const KEY_HEX = /^[0-9a-fA-F]{64}$/;

/**
 * The card-code key from CODE_ENCRYPTION_KEY, else from CODE_ENCRYPTION_KEY_FILE, or null when neither
 * holds one. Which variable supplied it is returned too, so a mismatch at start can name it.
 */
export function readCodeEncryptionKey(env: Env): { key: Buffer; source: string } | null {
  if (env.CODE_ENCRYPTION_KEY) return { key: Buffer.from(env.CODE_ENCRYPTION_KEY, 'hex'), source: 'CODE_ENCRYPTION_KEY' };
  const file = resolve(env.CODE_ENCRYPTION_KEY_FILE);
  if (!existsSync(file)) return null;
  const hex = readFileSync(file, 'utf8').trim();
  if (!KEY_HEX.test(hex)) throw new ConfigError(`CODE_ENCRYPTION_KEY_FILE: ${file} does not hold 64 hex characters`);
  return { key: Buffer.from(hex, 'hex'), source: 'CODE_ENCRYPTION_KEY_FILE' };
}

/**
 * Generates a fresh key into CODE_ENCRYPTION_KEY_FILE (mode 0600), so a plain `npm start` works on a new
 * installation. Another process creating the file first wins: its key is used, and `created` is false.
 */
export function generateCodeEncryptionKey(env: Env): { key: Buffer; created: boolean } {
  const file = resolve(env.CODE_ENCRYPTION_KEY_FILE);
  mkdirSync(dirname(file), { recursive: true });
  const hex = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${hex}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { key: readCodeEncryptionKey(env)!.key, created: false };
    throw err;
  }
  chmodSync(file, 0o600);
  return { key: Buffer.from(hex, 'hex'), created: true };
}

export function withKey(env: Env, codeEncryptionKey: Buffer): Config {
  const { CODE_ENCRYPTION_KEY: _fromEnv, ...rest } = env;
  return Object.freeze({ ...rest, codeEncryptionKey });
}

/** Configuration for tools and tests that do not start the service (no fingerprint check). */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const env = parseEnv(source);
  return withKey(env, readCodeEncryptionKey(env)?.key ?? generateCodeEncryptionKey(env).key);
}
