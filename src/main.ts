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
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  const base = config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://localhost:${info.port}`;
  process.stdout.write(`Store API:   ${base}/api/\nLicense API: ${base}/license-api/\n`);
  logger.info('listening', { port: info.port, workers: Boolean(workers) });
});

onShutdown(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await workers?.close();
  await services.close();
});
