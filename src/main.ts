import { startWorkerProcess } from '../workers/process.js';
import { createApp } from './app.js';
import { bootstrap, exitOnUncaught, onShutdown, startOrExit, StartupError } from './bootstrap.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from './lib/deadline.js';
import type { Config } from './env.js';
import { serveHttp, type HttpServer } from './http/server.js';
import { isDatabaseEmpty, seedDemoData } from './seed/index.js';

/** Listens on HOST:PORT; a port that is taken or not allowed fails the start naming PORT. */
function listen(fetch: ReturnType<typeof createApp>['fetch'], config: Config): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const http = serveHttp(fetch, { port: config.PORT, hostname: config.HOST });
    http.server.once('listening', () => resolve(http));
    http.server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'is already in use' : err.code === 'EACCES' ? 'is not allowed' : `cannot be used (${err.message})`;
      reject(new StartupError(`PORT: ${config.PORT} on ${config.HOST} ${why}`));
    });
  });
}

/** `npm start`: database ready, demo data on an empty database, the API here and the workers in a child process. */
const { services, http } = await startOrExit(async () => {
  const services = await bootstrap({ prepareDatabase: true });
  const { config, logger } = services;
  exitOnUncaught(services.logger);
  if (await isDatabaseEmpty(services.db)) {
    await seedDemoData(services.db, config);
    logger.info('demo data seeded; run `npm run -s seed -- --json` for the demo credentials');
  }
  const app = createApp(services);
  return { services, http: await listen(app.fetch, config) };
});

// Workers start once the port is ours: a start that fails on the port has taken no job.
const workers = services.config.RUN_WORKERS ? startWorkerProcess(services) : null;

onShutdown(services.logger, services.config.SHUTDOWN_TIMEOUT_MS, async (deadline) => {
  const workersStopped = workers?.close(deadline);
  // Out of a load balancer's rotation first: /ready fails and answers close their connections, while requests are
  // still served for SHUTDOWN_DRAIN_DELAY_MS. Then stop accepting and let the requests in flight finish while the
  // worker process finishes its jobs, then the connections.
  services.lifecycle.draining = true;
  http.closeConnectionsAfterAnswers();
  await until(deadline, sleep(services.config.SHUTDOWN_DRAIN_DELAY_MS));
  await Promise.all([until(deadline, http.drain()), workersStopped]);
  await services.close(deadline);
});

await startOrExit(async () => {
  await workers?.ready;
  const { config, logger } = services;
  const base = config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://localhost:${config.PORT}`;
  process.stdout.write(`Store API:   ${base}/api/\nLicense API: ${base}/license-api/\n`);
  logger.info({ port: config.PORT, workers: Boolean(workers) }, 'listening');
});
