import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { expect, inject } from 'vitest';
import { checkContract } from './contract.js';
import { startWorkers, type RunningWorkers, type WorkerOptions } from '../../workers/index.js';
import { createApp, createLane } from '../../src/app.js';
import { loadConfig } from '../../src/core/env.js';
import type { Services } from '../../src/runtime/services.js';
import { createServices } from '../../src/runtime/services.js';
import { storeGauges } from '../../src/startup/gauges.js';
import { serveHttp } from '../../src/http/server.js';
import { scrape, TEST_METRICS_TOKEN } from './processes.js';

export type TestApp = {
  services: Services;
  baseUrl: string;
  adminToken: string;
  /** fetch() against the running server; `path` starts with `/`. */
  request: (path: string, init?: RequestInit) => Promise<Response>;
  /** GET /metrics as Prometheus scrapes it (with METRICS_TOKEN): the exposition text. */
  scrape: () => Promise<string>;
  /** Starts the BullMQ workers in this process (once). */
  startWorkers: () => Promise<void>;
  /** A second API server on the same database, Redis and prefix, with services of its own (another process's caches). */
  peer: () => Promise<{ baseUrl: string; close: () => Promise<void> }>;
  close: () => Promise<void>;
};

/**
 * A real server on a free port over a fresh database (copied from the migrated template) and
 * its own BullMQ prefix, so test files run in parallel without seeing each other.
 */
/** A fresh database copied from the migrated template; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const templateUrl = new URL(inject('templateDatabaseUrl'));
  const template = templateUrl.pathname.slice(1);
  const name = `topup_test_${randomBytes(6).toString('hex')}`;
  const maintenance = new URL(templateUrl);
  maintenance.pathname = '/postgres';
  const admin = postgres(maintenance.toString(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}" template "${template}"`);
  const url = new URL(templateUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    workers?: boolean;
    workerOptions?: WorkerOptions;
    /** The URL the service connects through (a pooler in front of the database, say); the database's own by default. */
    serviceDatabaseUrl?: (url: string) => string;
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const name = database.name;
  const adminToken = randomBytes(24).toString('hex');
  const prefix = `test:${name}`;
  const config = loadConfig({
    DATABASE_URL: options.serviceDatabaseUrl?.(database.url) ?? database.url,
    DATABASE_POOL_SIZE: '8',
    // The shared Redis, unless the test points the service at a Sentinel set or a Cluster of its own.
    ...(options.env?.REDIS_SENTINELS || options.env?.REDIS_CLUSTER_NODES ? {} : { REDIS_URL: inject('redisUrl') }),
    BULLMQ_PREFIX: prefix,
    CODE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    METRICS_TOKEN: TEST_METRICS_TOKEN,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const services = createServices(config, storeGauges);
  const app = createApp(services);
  // Every answer is checked against its route's declared contract (test/helpers/contract.ts).
  const contract = checkContract(app, inject('contractDir'), expect.getState().testPath ?? name);
  const listen = async (fetch: Parameters<typeof serveHttp>[0], lane: ReturnType<typeof createLane>) => {
    const { server } = serveHttp(fetch, { port: 0, hostname: '127.0.0.1', lane });
    await new Promise((resolve) => server.once('listening', resolve));
    return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  const { server, baseUrl } = await listen(contract.fetch, createLane(services));
  let workers: RunningWorkers | null = null;
  if (options.workers) workers = await startWorkers(services, options.workerOptions);

  return {
    services,
    baseUrl,
    adminToken,
    request: (path, init) => fetch(`${baseUrl}${path}`, init),
    scrape: () => scrape(baseUrl),
    startWorkers: async () => {
      workers ??= await startWorkers(services, options.workerOptions);
    },
    peer: async () => {
      const peerServices = createServices(config, storeGauges);
      const peer = await listen(createApp(peerServices).fetch, createLane(peerServices));
      return {
        baseUrl: peer.baseUrl,
        close: async () => {
          await new Promise<void>((resolve) => peer.server.close(() => resolve()));
          await peerServices.close();
        },
      };
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await workers?.close();
      // The shared Redis keeps nothing of this file (a Sentinel set or a Cluster of the test's own goes with it).
      if (services.config.redis.kind === 'server') {
        const keys = await services.redis.keys(`${prefix}:*`);
        if (keys.length) await services.redis.del(...keys);
      }
      await services.close();
      await database.drop();
      const violations = contract.violations();
      if (violations.length) throw new Error(`answers that break their route's contract:\n${violations.join('\n')}`);
    },
  };
}
