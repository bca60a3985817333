import { randomBytes } from 'node:crypto';
import { freePort, runEntry, runWorkerProcess, waitForHttp, type Run } from './processes.js';

/**
 * The service as it runs in production, each part its own process: one API process (no workers inside)
 * and worker processes, on a database and Redis of the test's choosing. Fault tests kill and restart parts.
 */
export type Cluster = {
  baseUrl: string;
  env: Record<string, string>;
  adminToken: string;
  api: Run;
  workers: Array<Run & { metricsUrl: string }>;
  startWorker: () => Promise<Run & { metricsUrl: string }>;
  /** Starts the API process again (after it was killed) and waits until it answers. */
  restartApi: () => Promise<Run>;
  /** Every process started so far (API processes first), living or not. */
  processes: () => Run[];
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
  const startApi = async () => {
    const api = runEntry('src/main.ts', { ...env, RUN_WORKERS: 'false' });
    await waitForHttp(`${baseUrl}/health`, api);
    return api;
  };
  const workers: Array<Run & { metricsUrl: string }> = [];
  const startWorker = async () => {
    const worker = await runWorkerProcess(env);
    workers.push(worker);
    return worker;
  };
  const apis = [await startApi()];
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();
  const cluster: Cluster = {
    baseUrl,
    env,
    adminToken,
    api: apis[0]!,
    workers,
    startWorker,
    restartApi: async () => {
      const api = await startApi();
      apis.push(api);
      cluster.api = api;
      return api;
    },
    processes: () => [...apis, ...workers],
    logs: () => [...apis, ...workers].map((p, i) => `--- process ${i}\n${p.stderr()}`).join('\n'),
    stop: async () => {
      await Promise.all([...apis, ...workers].map((p) => p.stop()));
    },
  };
  return cluster;
}
