import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { createTestDatabase } from '../helpers/harness.js';
import { ROOT, runEntry, waitForHttp } from '../helpers/processes.js';

/**
 * What a start shows and how the service is started elsewhere, with the real entry points in processes of their
 * own: the banner on stdout, the seed's credentials as JSON, the compiled service a container runs (C14, C20).
 */
const { serviceEnv, start } = entryPointsOnOwnDatabase();

// Each test starts the service as a process of its own: on a busy 2-core machine one start can take 10 s or more.
describe('the start banner on stdout', { timeout: 90_000 }, () => {
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

describe('demo credentials (C14)', { timeout: 90_000 }, () => {
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
    // `npm run build`: dist/ beside node_modules, with the migrations it applies at start. tsc alone takes over a
    // minute on a 2-core machine running three other test files, hence the long timeout.
    const build = runEntry('node_modules/typescript/bin/tsc', {}, { compiled: true, args: ['-p', 'tsconfig.build.json'] });
    expect((await build.exit).code, build.stdout()).toBe(0);
    await cp(join(ROOT, 'migrations'), join(ROOT, 'dist/migrations'), { recursive: true });
    const env = await serviceEnv();
    const run = start(env, 'dist/src/main.js', true);
    await waitForHttp(`http://127.0.0.1:${env.PORT}/ready`, run);
    run.process.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
  }, 240_000);
});
