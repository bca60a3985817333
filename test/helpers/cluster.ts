import { randomBytes } from 'node:crypto';
import { freePort, runEntry, waitForHttp, type Run } from './processes.js';

/**
 * The service as it runs in production, each part its own process: one API process (no workers inside)
 * and worker processes, on a database and Redis of the test's choosing. Fault tests kill and restart parts.
 */
export type Cluster = {
  baseUrl: string;
  env: Record<string, string>;
  adminToken: string;
  api: Run;
  workers: Run[];
  startWorker: () => Promise<Run>;
  /** Output of every process so far, for a failing test's message. */
  logs: () => string;
  stop: () => Promise<void>;
};

export async function startCluster(options: {
  databaseUrl: string;
  redisUrl: string;
  workers?: number;
  env?: Record<string, string>;
}): Promise<Cluster> {
  const port = await freePort();
  const adminToken = `admin-${randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_SIZE: '8',
    REDIS_URL: options.redisUrl,
    BULLMQ_PREFIX: `fault:${randomBytes(4).toString('hex')}`,
    CODE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = runEntry('src/main.ts', { ...env, RUN_WORKERS: 'false' });
  await waitForHttp(`${baseUrl}/health`, api);
  const workers: Run[] = [];
  const startWorker = async () => {
    const worker = runEntry('workers/main.ts', env);
    workers.push(worker);
    // A worker is up once it has logged nothing fatal for a moment and its process lives.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    worker.ensureRunning();
    return worker;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();
  return {
    baseUrl,
    env,
    adminToken,
    api,
    workers,
    startWorker,
    logs: () => [api, ...workers].map((p, i) => `--- process ${i}\n${p.stderr()}`).join('\n'),
    stop: async () => {
      await Promise.all([api, ...workers].map((p) => p.stop()));
    },
  };
}
