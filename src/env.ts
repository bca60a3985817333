import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';

/** Every setting the service reads from the environment, with working local defaults. */
const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const positiveInt = z.coerce.number().int().positive();

const EnvSchema = z.object({
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/topup'),
  DATABASE_POOL_SIZE: positiveInt.default(16),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  BULLMQ_PREFIX: z.string().min(1).default('topup'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_BASE_URL: z.url().optional(),
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
  WORKER_CONCURRENCY: positiveInt.default(8),
  TOPUP_PROVIDER: z.enum(['manual', 'http']).default('manual'),
  TOPUP_PROVIDER_URL: z.url().optional(),
  TOPUP_PROVIDER_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

export type Config = Omit<Env, 'CODE_ENCRYPTION_KEY'> & {
  /** 32-byte AES key for card codes at rest. Never logged. */
  codeEncryptionKey: Buffer;
};

export class ConfigError extends Error {}

/** Parses the environment; a wrong value throws a ConfigError naming the variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  // Empty strings count as unset so `FOO=` in a .env file falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = EnvSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const env = result.data;
  if (env.TOPUP_PROVIDER === 'http' && (!env.TOPUP_PROVIDER_URL || !env.TOPUP_PROVIDER_SECRET)) {
    throw new ConfigError(
      'Invalid configuration:\n  TOPUP_PROVIDER_URL, TOPUP_PROVIDER_SECRET: required when TOPUP_PROVIDER=http',
    );
  }
  return env;
}

/**
 * Reads the card-code key from CODE_ENCRYPTION_KEY, else from CODE_ENCRYPTION_KEY_FILE,
 * generating and storing a fresh one there on first start (mode 0600) so a plain
 * `npm start` works. Losing the file makes stored codes unreadable: back it up.
 */
export function resolveCodeEncryptionKey(env: Env): Buffer {
  if (env.CODE_ENCRYPTION_KEY) return Buffer.from(env.CODE_ENCRYPTION_KEY, 'hex');
  const file = resolve(env.CODE_ENCRYPTION_KEY_FILE);
  if (existsSync(file)) {
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
      throw new ConfigError(`Invalid configuration:\n  CODE_ENCRYPTION_KEY_FILE: ${file} does not hold 64 hex characters`);
    }
    return Buffer.from(hex, 'hex');
  }
  mkdirSync(dirname(file), { recursive: true });
  const hex = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${hex}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process sharing the file created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolveCodeEncryptionKey(env);
    throw err;
  }
  chmodSync(file, 0o600);
  return Buffer.from(hex, 'hex');
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = parseEnv(source);
  const codeEncryptionKey = resolveCodeEncryptionKey(parsed);
  const { CODE_ENCRYPTION_KEY: _fromEnv, ...env } = parsed;
  return Object.freeze({ ...env, codeEncryptionKey });
}
