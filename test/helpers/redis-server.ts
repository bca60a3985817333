import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, sleep } from './processes.js';

export type OwnRedis = { url: string; port: number; stop: () => Promise<void>; start: () => Promise<void>; close: () => Promise<void> };

/**
 * A redis-server of the test's own on a spare port, without persistence (as the machine's), so a test
 * can stop it and start it again empty without touching the shared one. `args`: more of its settings.
 */
export async function ownRedis(args: string[] = []): Promise<OwnRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'topup-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  const answers = async () => {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  };
  const start = async () => {
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'yes', '--logfile', join(dir, 'log'), ...args], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100 && !(await answers()); i++) await sleep(50);
  };
  const stop = async () => {
    // No ready check: it asks INFO, which a server started with INFO renamed away refuses, and would then never stop.
    const client = new Redis(url, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    await client.connect().then(() => client.call('shutdown', 'nosave')).catch(() => {});
    client.disconnect();
    for (let i = 0; i < 100 && (await answers()); i++) await sleep(50);
  };
  await start();
  return { url, port, stop, start, close: async () => (await stop(), await rm(dir, { recursive: true, force: true })) };
}
