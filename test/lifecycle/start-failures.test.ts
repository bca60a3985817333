import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { freePort } from '../helpers/processes.js';
import { ownRedis } from '../helpers/redis-server.js';

/**
 * C20 as an operator meets it at start, with the real entry point in its own process: a problem at start is one
 * line naming the variable and exit code 1.
 */
const { serviceEnv, start, startServing, failsWithOneLine } = entryPointsOnOwnDatabase();

// Each test starts the service as processes of its own: on a busy 2-core machine one start can take 10 s or more.
describe('a problem at start is one line naming the variable (C20)', { timeout: 90_000 }, () => {
  it('PostgreSQL on a dead port', async () => {
    const port = await freePort();
    const line = await failsWithOneLine(start(await serviceEnv({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/topup` })));
    expect(line).toBe(`DATABASE_URL: cannot connect to 127.0.0.1:${port} (connection refused)`);
  });

  it('migrations go to DATABASE_MIGRATION_URL when it is set, and its failure names it (C21)', async () => {
    const port = await freePort();
    const line = await failsWithOneLine(start(await serviceEnv({ DATABASE_MIGRATION_URL: `postgres://postgres@127.0.0.1:${port}/topup` })));
    expect(line).toBe(`DATABASE_MIGRATION_URL: cannot connect to 127.0.0.1:${port} (connection refused)`);
  });

  it('a DATABASE_URL of another database kind, and several wrong settings at once', async () => {
    expect(await failsWithOneLine(start(await serviceEnv({ DATABASE_URL: 'mysql://x' })))).toBe(
      'DATABASE_URL: must be a postgres:// or postgresql:// URL',
    );
    const run = start(await serviceEnv({ PORT: 'abc', TOKEN_TTL_SECONDS: '-1' }));
    expect((await run.exit).code).toBe(1);
    expect(run.stderr().trim().split('\n')).toEqual(['PORT: must be a number', 'TOKEN_TTL_SECONDS: must be greater than 0']);
  });

  it('Redis that does not answer', async () => {
    const port = await freePort();
    expect(await failsWithOneLine(start(await serviceEnv({ REDIS_URL: `redis://127.0.0.1:${port}` })))).toBe(
      `REDIS_URL: cannot connect to 127.0.0.1:${port} (connection refused)`,
    );
  });

  it('Redis that refuses INFO, which the queues need (renamed, or an ACL without it)', async () => {
    const redis = await ownRedis(['--rename-command', 'INFO', '']);
    try {
      const line = await failsWithOneLine(start(await serviceEnv({ REDIS_URL: redis.url })));
      expect(line).toMatch(new RegExp(`^REDIS_URL: 127\\.0\\.0\\.1:${redis.port} refuses INFO \\(.*unknown command.*\\), which the queues need: allow it for this user$`));
    } finally {
      await redis.close();
    }
  });

  it('a port already in use', async () => {
    const env = await serviceEnv();
    const first = await startServing(env);
    expect(await failsWithOneLine(start({ ...env, BULLMQ_PREFIX: `${env.BULLMQ_PREFIX}:2` }))).toBe(`PORT: ${env.PORT} on 127.0.0.1 is already in use`);
    await first.stop();
  });

  it('a different code-encryption key, or its file gone, refuses to start and generates nothing', async () => {
    const env = await serviceEnv();
    const first = await startServing(env);
    await first.stop();
    const original = await readFile(env.CODE_ENCRYPTION_KEY_FILE!, 'utf8');

    const other = randomBytes(32).toString('hex');
    expect(await failsWithOneLine(start({ ...env, CODE_ENCRYPTION_KEY: other }))).toMatch(
      /^CODE_ENCRYPTION_KEY: the key [0-9a-f]{16} is not the key that sealed the stored card codes \([0-9a-f]{16}\); start with the original key$/,
    );

    const moved = `${env.CODE_ENCRYPTION_KEY_FILE}.moved`;
    await writeFile(moved, original);
    await rm(env.CODE_ENCRYPTION_KEY_FILE!);
    expect(await failsWithOneLine(start(env))).toMatch(/^CODE_ENCRYPTION_KEY_FILE: .* is missing, but the stored card codes are sealed with the key [0-9a-f]{16}/);
    expect(existsSync(env.CODE_ENCRYPTION_KEY_FILE!)).toBe(false);

    // With the original key back, it starts again.
    await writeFile(env.CODE_ENCRYPTION_KEY_FILE!, original, { mode: 0o600 });
    await (await startServing(env)).stop();
  });
});
