import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { createTestDatabase } from '../helpers/harness.js';
import { freePort, ROOT, runEntry, sleep, waitForHttp } from '../helpers/processes.js';
import { ownRedis } from '../helpers/redis-server.js';

/**
 * C20 as an operator meets it, with the real entry point in its own process: a problem at start is one
 * line naming the variable and exit code 1; SIGTERM finishes what is in flight and exits 0 within
 * SHUTDOWN_TIMEOUT_MS, even with Redis gone; a second signal exits at once.
 */
const { serviceEnv, start, startServing, failsWithOneLine, databaseUrl } = entryPointsOnOwnDatabase();

describe('a problem at start is one line naming the variable (C20)', () => {
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

describe('the start banner on stdout', () => {
  /** The lines a start prints on stdout (all at once, when it serves), then stopped. */
  const bannerOf = async (env: Record<string, string>): Promise<string[]> => {
    const run = start(env);
    await expect.poll(() => (run.ensureRunning(), run.stdout()), { timeout: 20_000 }).toContain('Queue dashboard:');
    await run.stop();
    return run.stdout().trim().split('\n');
  };

  it('names the APIs, the docs and the dashboard; the key file on the start that created it; WEBHOOK_ALLOW_PRIVATE', async () => {
    const fresh = await createTestDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'topup-key-'));
    try {
      const env = await serviceEnv({ DATABASE_URL: fresh.url, CODE_ENCRYPTION_KEY_FILE: join(dir, 'code-encryption.key'), RUN_WORKERS: 'false' });
      const base = `http://localhost:${env.PORT}`;
      const urls = [`Store API:       ${base}/api/`, `License API:     ${base}/license-api/`, `API docs:        ${base}/docs`];
      expect(await bannerOf(env)).toEqual([
        ...urls,
        `Queue dashboard: ${base}/admin/queues (any user name, ADMIN_TOKEN as the password)`,
        `Created the card-code encryption key ${join(dir, 'code-encryption.key')}: back it up with the database backups, which are unreadable without it`,
      ]);
      // The next start reads that file: nothing new to back up.
      expect(await bannerOf({ ...env, ADMIN_TOKEN: '', WEBHOOK_ALLOW_PRIVATE: 'true' })).toEqual([
        ...urls,
        'Queue dashboard: off, as is the admin API (/admin/): ADMIN_TOKEN is not set',
        'Warning: WEBHOOK_ALLOW_PRIVATE=true lets webhooks go to http and to private or loopback addresses: for local testing only',
      ]);
    } finally {
      await fresh.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Opens a POST whose body is not finished (an endpoint that reads the body first): a request in flight. */
function stalledUpload(port: number, path = '/license-api/purchases/validation') {
  const socket = createConnection({ port, host: '127.0.0.1' });
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  socket.on('error', () => {});
  const body = '{"purchase_code":"ABCDEFGH-1234"}';
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
  return {
    finish: () => socket.write(body.slice(10)),
    abort: () => socket.destroy(),
    answer: () => new Promise<string>((resolve) => socket.on('close', () => resolve(answer))),
  };
}

describe('stopping (C20)', () => {
  it('SIGTERM lets a request in flight finish, then exits 0', async () => {
    const env = await serviceEnv({ SHUTDOWN_TIMEOUT_MS: '8000' });
    const run = await startServing(env);
    const upload = stalledUpload(Number(env.PORT));
    await sleep(300);
    run.process.kill('SIGTERM');
    await sleep(500);
    // Not accepting any more, but the open request is still served.
    await expect(fetch(`http://127.0.0.1:${env.PORT}/health`)).rejects.toThrow();
    upload.finish();
    expect(await upload.answer()).toMatch(/^HTTP\/1\.1 401[^]*the api_key parameter is required/);
    expect(await run.exit).toEqual({ code: 0, signal: null });
  });

  it('SIGTERM during a code import lets it finish and answer, however its workers stop beside it', async () => {
    const env = await serviceEnv({ SHUTDOWN_TIMEOUT_MS: '8000' });
    const run = await startServing(env);
    const sql = postgres(databaseUrl(), { max: 1, onnotice: () => {} });
    const [service] = await sql<{ id: number }[]>`select id from card_services order by id limit 1`;
    await sql.end();
    // 200 codes, sent slowly: the upload is still arriving when the signal comes.
    const lines = Array.from({ length: 200 }, (_, i) => `STOP-${i}-${randomBytes(4).toString('hex')}\n`);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = lines.splice(0, 20);
        if (next.length === 0) return controller.close();
        await sleep(150);
        controller.enqueue(new TextEncoder().encode(next.join('')));
      },
    });
    const answer = fetch(`http://127.0.0.1:${env.PORT}/admin/card-services/${service!.id}/codes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, 'Content-Type': 'text/plain' },
      body,
      duplex: 'half',
    } as RequestInit);
    await sleep(400);
    const asked = Date.now();
    run.process.kill('SIGTERM');
    const response = await answer;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { message: unknown }).message).toEqual({ added: 200, skipped: 0, fulfilled_orders: 0 });
    expect(await run.exit).toEqual({ code: 0, signal: null });
    // Well within SHUTDOWN_TIMEOUT_MS: nothing waited for a worker.
    expect(Date.now() - asked).toBeLessThan(6000);
  });

  it('with SHUTDOWN_DRAIN_DELAY_MS, SIGTERM takes the process out of rotation before its port closes (C21)', async () => {
    const env = await serviceEnv({ SHUTDOWN_DRAIN_DELAY_MS: '1500', SHUTDOWN_TIMEOUT_MS: '5000' });
    const run = await startServing(env);
    const base = `http://127.0.0.1:${env.PORT}`;
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const asked = Date.now();
    run.process.kill('SIGTERM');
    await sleep(300);
    // A load balancer's health check fails at once, while requests are still served and each answer closes its connection.
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'draining', postgres: 'up', redis: 'up' });
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
    // Then the port closes, and the process exits 0.
    await expect.poll(() => fetch(`${base}/health`).then(() => 'open', () => 'closed'), { timeout: 3000, interval: 100 }).toBe('closed');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1500);
    expect(await run.exit).toEqual({ code: 0, signal: null });
  });

  it('SIGTERM exits 0 within SHUTDOWN_TIMEOUT_MS with Redis gone', async () => {
    const redis = await ownRedis();
    try {
      const env = await serviceEnv({ REDIS_URL: redis.url });
      const run = await startServing(env);
      await redis.stop();
      await sleep(500);
      const asked = Date.now();
      run.process.kill('SIGTERM');
      expect(await run.exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - asked).toBeLessThan(3000);
    } finally {
      await redis.close();
    }
  });

  it('one Ctrl-C on npm start is one graceful stop, though the terminal and npm both pass it on, and says so in JSON', async () => {
    const env = await serviceEnv({ SHUTDOWN_TIMEOUT_MS: '8000', LOG_LEVEL: 'info' });
    // A terminal's foreground job: npm and everything it started, in a process group of their own.
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    npm.stderr!.on('data', (chunk) => (stderr += chunk));
    npm.stdout!.resume();
    const exit = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    try {
      const running = { process: npm, stop: async () => {}, ensureRunning: () => expect(npm.exitCode, stderr).toBeNull() };
      await waitForHttp(`http://127.0.0.1:${env.PORT}/health`, running);
      const upload = stalledUpload(Number(env.PORT));
      await sleep(300);
      process.kill(-npm.pid!, 'SIGINT');
      await sleep(500);
      upload.finish();
      expect(await upload.answer()).toMatch(/^HTTP\/1\.1 401[^]*the api_key parameter is required/);
      expect(await exit).toBe(0);
    } finally {
      if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
    }
    expect(stderr).not.toContain('again');
    // The log stream stays JSON lines, shutdown included (npm prints nothing of its own with a clean exit).
    const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((line) => JSON.parse(line).msg)).toContain('shutting down');
  });

  it('a second signal exits at once', async () => {
    const env = await serviceEnv({ SHUTDOWN_TIMEOUT_MS: '30000' });
    const run = await startServing(env);
    stalledUpload(Number(env.PORT));
    await sleep(300);
    run.process.kill('SIGTERM');
    await sleep(500);
    const asked = Date.now();
    run.process.kill('SIGTERM');
    expect((await run.exit).code).toBe(143);
    expect(Date.now() - asked).toBeLessThan(1000);
  });
});

describe('what the log says', () => {
  it('a client that disconnects mid-upload is an info line, not an unexpected error', async () => {
    const env = await serviceEnv({ LOG_LEVEL: 'info' });
    const run = await startServing(env);
    const upload = stalledUpload(Number(env.PORT));
    await sleep(300);
    upload.abort();
    await expect.poll(() => run.stderr(), { timeout: 5000 }).toContain('client disconnected before the answer');
    const line = JSON.parse(run.stderr().split('\n').find((l) => l.includes('client disconnected'))!);
    expect(line).toMatchObject({ level: 'info', method: 'POST', path: '/license-api/purchases/validation' });
    expect(run.stderr()).not.toContain('unexpected error');
    await run.stop();
  });
});

describe('demo credentials (C14)', () => {
  it('`npm run -s seed -- --json` prints one JSON object and nothing else on stdout', async () => {
    const env = await serviceEnv();
    const child = spawn('npm', ['run', '-s', 'seed', '--', '--json'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(Object.keys(JSON.parse(stdout))).toEqual(
      expect.arrayContaining(['publicKey', 'secretKey', 'apiKey', 'purchaseCode', 'baseUrl', 'licenseBaseUrl']),
    );
  });
});

describe('the container runs compiled JavaScript with node directly (C20)', () => {
  it('Dockerfile and compose start dist/ with node, never through npm', async () => {
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/CMD \["node", "dist\/src\/main\.js"\]/);
    const compose = await readFile(join(ROOT, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/command: \["node", "dist\/workers\/main\.js"\]/);
    expect(compose).not.toMatch(/npm/);
    // No well-known admin token to fall back to: compose refuses to start without one.
    expect(compose).toMatch(/ADMIN_TOKEN: \$\{ADMIN_TOKEN:\?/);
  });

  it('the compiled service starts, serves and stops on SIGTERM with exit code 0', async () => {
    // `npm run build`: dist/ beside node_modules, with the migrations it applies at start.
    const build = runEntry('node_modules/typescript/bin/tsc', {}, { compiled: true, args: ['-p', 'tsconfig.build.json'] });
    expect((await build.exit).code, build.stdout()).toBe(0);
    await cp(join(ROOT, 'migrations'), join(ROOT, 'dist/migrations'), { recursive: true });
    const env = await serviceEnv();
    const run = start(env, 'dist/src/main.js', true);
    await waitForHttp(`http://127.0.0.1:${env.PORT}/ready`, run);
    run.process.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
  }, 90_000);
});
