import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { createTestDatabase } from './harness.js';
import { freePort, runEntry, TEST_METRICS_TOKEN, waitForHttp, type Run } from './processes.js';

/**
 * The service's real entry points in processes of their own, on a test's database: the environment an operator
 * would set, starts that must fail with one line, and a stop of everything started.
 */
export function entryPoints({ databaseUrl, keyDir }: { databaseUrl: () => string; keyDir: () => string }) {
  const running: Run[] = [];

  /** A working environment (the shared Redis unless `overrides` point elsewhere), with `overrides` on top. */
  const serviceEnv = async (overrides: Record<string, string> = {}): Promise<Record<string, string>> => ({
    DATABASE_URL: databaseUrl(),
    ...(overrides.REDIS_SENTINELS || overrides.REDIS_CLUSTER_NODES ? {} : { REDIS_URL: inject('redisUrl') }),
    BULLMQ_PREFIX: `test:lifecycle:${randomBytes(4).toString('hex')}`,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    CODE_ENCRYPTION_KEY_FILE: join(keyDir(), 'code-encryption.key'),
    ADMIN_TOKEN: 'lifecycle-admin-token-0123456789',
    METRICS_TOKEN: TEST_METRICS_TOKEN,
    SHUTDOWN_TIMEOUT_MS: '3000',
    ...overrides,
  });

  const start = (env: Record<string, string>, file = 'src/main.ts', compiled = false): Run => {
    const run = runEntry(file, env, { compiled });
    running.push(run);
    return run;
  };

  const startServing = async (env: Record<string, string>): Promise<Run> => {
    const run = start(env);
    await waitForHttp(`http://127.0.0.1:${env.PORT}/health`, run);
    return run;
  };

  /** The process ended with code 1 and said exactly one line, with no stack trace. */
  const failsWithOneLine = async (run: Run): Promise<string> => {
    const { code } = await run.exit;
    const lines = run.stderr().trim().split('\n');
    expect(code, run.stderr()).toBe(1);
    expect(lines, run.stderr()).toHaveLength(1);
    expect(run.stderr()).not.toMatch(/\n\s+at /);
    return lines[0]!;
  };

  const stopAll = async () => {
    for (const run of running) await run.stop();
  };

  return { serviceEnv, start, startServing, failsWithOneLine, stopAll };
}

/**
 * `entryPoints` on a database and a code-key folder of the test file's own, made before its tests and removed after
 * them (with every process started stopped first).
 */
export function entryPointsOnOwnDatabase() {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let keyDir = '';
  const databaseUrl = () => database!.url;
  const entries = entryPoints({ databaseUrl, keyDir: () => keyDir });
  beforeAll(async () => {
    database = await createTestDatabase();
    keyDir = await mkdtemp(join(tmpdir(), 'topup-key-'));
  });
  afterAll(async () => {
    await entries.stopAll();
    await database?.drop();
    if (keyDir) await rm(keyDir, { recursive: true, force: true });
  });
  return { ...entries, databaseUrl };
}
