import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { httpAnswerComplete, ROOT, sleep, supervise, waitForHttp } from '../helpers/processes.js';
import { ownRedis } from '../helpers/redis-server.js';

/**
 * C20 as an operator meets it at stop, with the real entry point in its own process: SIGTERM finishes what is in
 * flight and exits 0 within SHUTDOWN_TIMEOUT_MS, even with Redis gone; a second signal exits at once; a client gone
 * mid-request is an info line.
 */
const { serviceEnv, startServing, databaseUrl } = entryPointsOnOwnDatabase();


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

/** One kept-alive connection, asked one request at a time: the answer, or what ended the connection instead. */
function keptAlive(port: number) {
  const socket = createConnection({ port, host: '127.0.0.1' });
  let received = '';
  let ended = false;
  let wake: () => void = () => {};
  socket.on('data', (chunk) => ((received += chunk), wake()));
  socket.on('close', () => ((ended = true), wake()));
  socket.on('error', () => {});
  return {
    ask: async (path: string) => {
      received = '';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const complete = () => httpAnswerComplete(received);
      while (!complete() && !ended) await new Promise<void>((resolve) => (wake = resolve));
      return complete() ? received : `connection ended after ${JSON.stringify(received)}`;
    },
  };
}

type AskFailure = { afterMs: number; error: string };

/**
 * Asks `path` from three clients at once, each every 20 ms, while `more(failures so far)` says so; the failures, each
 * with when it came (ms after `since`). Three, so that a slow answer to one leaves the others asking.
 */
async function askWhile(port: number, path: string, since: number, more: (failures: AskFailure[]) => boolean): Promise<AskFailure[]> {
  const failures: AskFailure[] = [];
  const client = async () => {
    while (more(failures)) {
      await fetch(`http://127.0.0.1:${port}${path}`).catch((err: Error) => failures.push({ afterMs: Date.now() - since, error: err.message }));
      await sleep(20);
    }
  };
  await Promise.all([client(), client(), client()]);
  return failures;
}

/** Sends SIGTERM, then asks `path` (askWhile) until the port refuses: how long after the signal that was (ms). */
async function stopWhileAsking(run: Awaited<ReturnType<typeof startServing>>, port: number, path: string): Promise<number> {
  const asked = Date.now();
  run.process.kill('SIGTERM');
  const failures = await askWhile(port, path, asked, (sofar) => Date.now() - asked < 6000 && sofar.length === 0);
  return failures[0]?.afterMs ?? Number.POSITIVE_INFINITY;
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
    expect(await ready.json()).toEqual({ status: 'draining', postgres: 'up', redis: 'up', workers: 'down' });
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
    // Then the port closes, and the process exits 0.
    await expect.poll(() => fetch(`${base}/health`).then(() => 'open', () => 'closed'), { timeout: 3000, interval: 100 }).toBe('closed');
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1500);
    expect(await run.exit).toEqual({ code: 0, signal: null });
  });

  it('a load balancer still sending after SHUTDOWN_DRAIN_DELAY_MS (its checks ran late) is served until it stops, its kept-alive connections too', async () => {
    const env = await serviceEnv({ SHUTDOWN_DRAIN_DELAY_MS: '800', SHUTDOWN_TIMEOUT_MS: '6000' });
    const run = await startServing(env);
    const port = Number(env.PORT);
    // A connection the balancer keeps from before the signal and uses again after the delay.
    const kept = keptAlive(port);
    expect(await kept.ask('/health')).toMatch(/^HTTP\/1\.1 200/);
    const asked = Date.now();
    run.process.kill('SIGTERM');
    const balancer = askWhile(port, '/api/get-card/orders', asked, () => Date.now() - asked < 1400);
    await sleep(1100);
    // Past the delay: the kept connection still gets its answer, and it closes the connection.
    expect(await kept.ask('/api/get-card/orders')).toMatch(/^HTTP\/1\.1 401[^]*Connection: close/i);
    expect(await balancer).toEqual([]);
    // Then the balancer is gone and the port closes.
    await expect.poll(() => fetch(`http://127.0.0.1:${port}/health`).then(() => 'open', () => 'closed'), { timeout: 3000, interval: 50 }).toBe('closed');
    expect(await run.exit).toEqual({ code: 0, signal: null });
  });

  // How long the port stays open after SIGTERM while three clients keep asking `path` (stopWhileAsking).
  it.each([
    ['requests that never stop hold the port open for at most twice SHUTDOWN_DRAIN_DELAY_MS', { delay: 500, timeout: 6000, path: '/api/get-card/orders', least: 800, most: 2000 }],
    // The delay, then half of the 2 s left: about 3 s. Twice the delay would reach the deadline (4 s).
    ['requests that never stop leave half the time before SHUTDOWN_TIMEOUT_MS to the requests in flight', { delay: 2000, timeout: 4000, path: '/api/get-card/orders', least: 2000, most: 3600 }],
    // The delay, then 250 ms without a request other than a probe; requests would have held it to 4 s.
    ['health checks alone do not hold the port open past the drain delay', { delay: 2000, timeout: 8000, path: '/ready', least: 2000, most: 3500 }],
  ] as const)('%s', async (_, { delay, timeout, path, least, most }) => {
    const env = await serviceEnv({ SHUTDOWN_DRAIN_DELAY_MS: String(delay), SHUTDOWN_TIMEOUT_MS: String(timeout) });
    const run = await startServing(env);
    const closedAfter = await stopWhileAsking(run, Number(env.PORT), path);
    expect(closedAfter).toBeGreaterThanOrEqual(least);
    expect(closedAfter).toBeLessThan(most);
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
      await waitForHttp(`http://127.0.0.1:${env.PORT}/health`, supervise(npm, 'npm start', () => stderr.slice(-4000)));
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
