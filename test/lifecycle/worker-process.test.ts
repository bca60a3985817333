import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { createAccount } from '../../src/modules/accounts/service.js';
import { addCodes } from '../../src/modules/inventory/service.js';
import { createCard } from '../helpers/fixtures.js';
import { createTestDatabase } from '../helpers/harness.js';
import { freePort, runEntry, scrape, sleep, TEST_METRICS_TOKEN, waitForHttp, workerProcessesOf, type Run } from '../helpers/processes.js';
import { ownRedis } from '../helpers/redis-server.js';

/**
 * `npm start` runs the workers in a child process of their own (workers/process.ts): orders are fulfilled
 * there, the API's /metrics still shows the jobs, a worker process that dies is replaced, and the worker
 * process never outlives the API process.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Database;
let env: Record<string, string>;
let baseUrl: string;
let serviceId: number;
let token: string;
const runs: Run[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = connectDatabase(database.url, { max: 2, applicationName: 'worker-process-test' });
  const key = randomBytes(32);
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    BULLMQ_PREFIX: `test:worker-process:${randomBytes(4).toString('hex')}`,
    CODE_ENCRYPTION_KEY: key.toString('hex'),
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '5000',
    METRICS_TOKEN: TEST_METRICS_TOKEN,
  };
  const card = await createCard(db.db, { services: [{ price: '1.00' }] });
  serviceId = card.services[0]!.id;
  await addCodes(db.db, key, serviceId, Array.from({ length: 10 }, (_, i) => `WP-${i}-${randomBytes(4).toString('hex')}`));
  const keys = await createAccount(db.db, { firstname: 'Worker', lastname: 'Process', currency: 'USD', currencySymbol: '$', balance: '100.00' });
  const api = await startApi();
  const answer = await fetch(`${baseUrl}/api/generate/authorization-token`, { method: 'POST', headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey } });
  token = ((await answer.json()) as { bearer_token: string }).bearer_token;
  await api.stop();
});

afterAll(async () => {
  for (const run of runs) await run.stop();
  await db?.close();
  await database?.drop();
});

async function startApi(overrides: Record<string, string> = {}): Promise<Run> {
  const run = runEntry('src/main.ts', { ...env, ...overrides });
  runs.push(run);
  await waitForHttp(`${baseUrl}/health`, run);
  // The banner comes once the worker process is ready.
  while (!run.stdout().includes('Store API:')) {
    run.ensureRunning();
    await sleep(50);
  }
  return run;
}

/** A process's niceness (field 19 of /proc/<pid>/stat, counted after the command's closing parenthesis). */
const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

/** Running, not merely not yet reaped (an orphan's zombie may linger where PID 1 does not reap). */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
};

type Readiness = { status: string; redis: string; workers?: string };
const readiness = async () => (await fetch(`${baseUrl}/ready`)).json() as Promise<Readiness>;

async function orderCompleted(): Promise<string> {
  const answer = await fetch(`${baseUrl}/api/card/make-order`, {
    method: 'POST',
    headers: { Authorization: token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ service_ids: [serviceId], quantities: [1] }),
  });
  expect(answer.status).toBe(200);
  const { utr } = ((await answer.json()) as { message: { utr: string } }).message;
  await expect
    .poll(async () => (await db.sql`select status from orders where utr = ${utr}`)[0]?.status, { timeout: 20_000, interval: 100 })
    .toBe(1);
  return utr;
}

describe('npm start runs its workers in a child process', () => {
  it('fulfils there, and the API /metrics counts the jobs the worker process ran', async () => {
    const api = await startApi();
    const [worker, ...more] = workerProcessesOf(api.process.pid!);
    expect(worker).toBeDefined();
    expect(more).toEqual([]);
    await orderCompleted();
    await orderCompleted();

    const metrics = await scrape(baseUrl);
    // Recorded by the worker process, rendered by the API process.
    expect(metrics).toMatch(/^job_duration_seconds_count\{queue="order-fulfilment"\} 2$/m);
    expect(metrics).toMatch(/^order_status_changes_total\{kind="card",status="completed",mode="live"\} 2$/m);
    // Recorded by the API process itself; scrape-time series once, not once per process.
    expect(metrics).toMatch(/^orders_placed_total\{kind="card",mode="live"\} 2$/m);
    expect(metrics.match(/^# TYPE card_codes_available gauge$/gm)).toHaveLength(1);
    expect(metrics).toMatch(new RegExp(`^card_codes_available\\{card_service_id="${serviceId}"\\} \\d+$`, 'm'));

    api.process.kill('SIGTERM');
    expect(await api.exit).toEqual({ code: 0, signal: null });
    await expect.poll(() => alive(worker!), { timeout: 10_000 }).toBe(false);
  }, 60_000);

  it('a worker process that dies is replaced, and orders placed meanwhile are fulfilled', async () => {
    const api = await startApi();
    const [first] = workerProcessesOf(api.process.pid!);
    process.kill(first!, 'SIGKILL');
    await orderCompleted();
    const [second] = workerProcessesOf(api.process.pid!);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(api.stderr()).toContain('the worker process ended');
    await api.stop();
  }, 60_000);

  it('a worker process that dies each time right after it got ready is started again ever more slowly', async () => {
    const api = await startApi();
    const waits = () => [...api.stderr().matchAll(/starting another in (\d+) ms/g)].map((m) => Number(m[1]));
    for (let round = 0; round < 3; round += 1) {
      await expect.poll(readiness, { timeout: 30_000, interval: 100 }).toMatchObject({ workers: 'up' });
      process.kill(workerProcessesOf(api.process.pid!)[0]!, 'SIGKILL');
      await expect.poll(() => waits().length, { timeout: 10_000 }).toBe(round + 1);
    }
    expect(waits()).toEqual([1000, 2000, 4000]);
    await api.stop();
  }, 90_000);

  it('the worker process shuts down by itself when the API process is killed', async () => {
    const api = await startApi();
    const [worker] = workerProcessesOf(api.process.pid!);
    api.process.kill('SIGKILL');
    await api.exit;
    await expect.poll(() => alive(worker!), { timeout: 10_000 }).toBe(false);
  }, 60_000);

  it('keeps serving when Redis goes away while its worker process starts, and starts the workers once Redis is back', async () => {
    const redis = await ownRedis();
    try {
      const run = runEntry('src/main.ts', { ...env, REDIS_URL: redis.url, LOG_LEVEL: 'info' });
      runs.push(run);
      // The port is served before the worker process is forked; it is still loading when Redis stops.
      await waitForHttp(`${baseUrl}/health`, run);
      await redis.stop();

      // The worker process's start fails naming Redis; `npm start` goes on serving.
      await expect.poll(() => run.stderr(), { timeout: 30_000 }).toMatch(/^REDIS_URL: cannot connect to /m);
      await sleep(500);
      run.ensureRunning();
      expect(run.stderr()).toContain('the worker process did not start; trying again');
      await expect.poll(() => run.stdout(), { timeout: 10_000 }).toContain('Workers:         not running yet');
      run.ensureRunning();
      expect(await readiness()).toMatchObject({ status: 'unavailable', redis: 'down', workers: expect.stringMatching(/^(down|starting)$/) });
      expect((await fetch(`${baseUrl}/health`)).status).toBe(200);

      await redis.start();
      await expect.poll(readiness, { timeout: 40_000, interval: 250 }).toEqual({ status: 'ready', postgres: 'up', redis: 'up', workers: 'up' });
      await orderCompleted();
      run.ensureRunning();
      await run.stop();
      expect(await run.exit).toEqual({ code: 0, signal: null });
    } finally {
      await redis.close();
    }
  }, 120_000);

  it('/ready says the workers are up once the worker process is ready', async () => {
    const api = await startApi();
    expect(await readiness()).toEqual({ status: 'ready', postgres: 'up', redis: 'up', workers: 'up' });
    await api.stop();
  }, 60_000);

  it('yields to the API while it is busy (placement first): orders placed meanwhile are fulfilled, and the usual pace is back once it is calm', async () => {
    const api = await startApi();
    const yielding = async () => Number(/^fulfilment_yielding (\d+)$/m.exec(await scrape(baseUrl))?.[1]);
    let busy = true;
    const clients: Promise<void>[] = [];
    try {
      expect(await yielding()).toBe(0);
      // 48 order lists asked at every moment, each read from PostgreSQL by the API process.
      const client = async () => {
        while (busy) await (await fetch(`${baseUrl}/api/get-card/orders`, { headers: { Authorization: token } })).arrayBuffer();
      };
      clients.push(...Array.from({ length: 48 }, client));
      await expect.poll(yielding, { timeout: 15_000, interval: 100 }).toBe(1);
      // Batches gather for a moment and go one at a time: the order is still fulfilled.
      await orderCompleted();
      await expect.poll(yielding, { timeout: 5_000, interval: 100 }).toBe(1);
      busy = false;
      await Promise.all(clients);
      await expect.poll(yielding, { timeout: 10_000, interval: 100 }).toBe(0);
    } finally {
      busy = false;
      await Promise.all(clients);
      await api.stop();
    }
  }, 60_000);

  it('runs the worker process at a lower priority than the API (WORKER_NICE)', async () => {
    const api = await startApi({ WORKER_NICE: '7' });
    const [worker] = workerProcessesOf(api.process.pid!);
    expect([niceOf(api.process.pid!), niceOf(worker!)]).toEqual([niceOf(process.pid), 7]);
    await api.stop();
    const equal = await startApi({ WORKER_NICE: '0' });
    expect(niceOf(workerProcessesOf(equal.process.pid!)[0]!)).toBe(niceOf(process.pid));
    await equal.stop();
  }, 60_000);
});
