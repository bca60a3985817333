import { setTimeout as delay } from 'node:timers/promises';
import { serve } from '@hono/node-server';
import { startWorkers } from '../workers/index.js';
import { createApp } from './app.js';
import { bootstrap, onShutdown } from './bootstrap.js';
import { isDatabaseEmpty, seedDemoData } from './seed/index.js';

/** `npm start`: database ready, demo data on an empty database, API and workers in one process. */
const services = await bootstrap();
const { config, logger } = services;
if (await isDatabaseEmpty(services.db)) {
  await seedDemoData(services.db, config);
  logger.info('demo data seeded; run `npm run seed -- --json` for the demo credentials');
}
const workers = config.RUN_WORKERS ? await startWorkers(services) : null;
const app = createApp(services);

// Requests still being handled when a stop is asked for (their client may have gone already):
// the connections are closed only once these have finished.
let inFlight = 0;
let drained: (() => void) | null = null;
const fetch: typeof app.fetch = async (request, env, ctx) => {
  inFlight++;
  try {
    return await app.fetch(request, env, ctx);
  } finally {
    if (--inFlight === 0) drained?.();
  }
};

const server = serve({ fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  const base = config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://localhost:${info.port}`;
  process.stdout.write(`Store API:   ${base}/api/\nLicense API: ${base}/license-api/\n`);
  logger.info('listening', { port: info.port, workers: Boolean(workers) });
});

onShutdown(async () => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  if (inFlight > 0) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), delay(10_000)]);
  await closed;
  await workers?.close();
  await services.close();
});
