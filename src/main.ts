import { startWorkerProcess } from '../workers/process.js';
import { createApp, createLane } from './app.js';
import { bootstrap, exitOnUncaught, onShutdown, startOrExit, StartupError } from './startup/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from './lib/deadline.js';
import type { Config } from './core/env.js';
import { serveHttp, type HttpServer } from './http/server.js';
import type { Lane } from './http/cached-lane.js';
import { isDatabaseEmpty, seedDemoData } from './seed/index.js';

/** Listens on HOST:PORT; a port that is taken or not allowed fails the start naming PORT. */
function listen(fetch: ReturnType<typeof createApp>['fetch'], lane: Lane, config: Config): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const http = serveHttp(fetch, { port: config.PORT, hostname: config.HOST, lane });
    http.server.once('listening', () => resolve(http));
    http.server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'is already in use' : err.code === 'EACCES' ? 'is not allowed' : `cannot be used (${err.message})`;
      reject(new StartupError(`PORT: ${config.PORT} on ${config.HOST} ${why}`));
    });
  });
}

/**
 * What `npm start` says on stdout once it serves (the logs are JSON on stderr): where to go, and what needs the
 * operator: a key file that must now be backed up, a setting meant for local testing only.
 */
function banner(config: Config, createdKeyFile: string | null, workersWaiting: boolean): string {
  const base = config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://localhost:${config.PORT}`;
  const lines = [
    `Store API:       ${base}/api/`,
    `License API:     ${base}/license-api/`,
    `API docs:        ${base}/docs`,
    config.ADMIN_TOKEN
      ? `Queue dashboard: ${base}/admin/queues (any user name, ADMIN_TOKEN as the password)`
      : 'Queue dashboard: off, as is the admin API (/admin/): ADMIN_TOKEN is not set',
  ];
  if (workersWaiting) {
    lines.push('Workers:         not running yet (see the log): started again with back-off; orders are taken meanwhile and fulfilled once they run');
  }
  if (createdKeyFile) {
    lines.push(`Created the card-code encryption key ${createdKeyFile}: back it up with the database backups, which are unreadable without it`);
  }
  if (config.WEBHOOK_ALLOW_PRIVATE) {
    lines.push('Warning: WEBHOOK_ALLOW_PRIVATE=true lets webhooks go to http and to private or loopback addresses: for local testing only');
  }
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * After the drain delay, this long without a request (probes aside) means the load balancer has stopped sending:
 * under load a balancer that still routes here sends many requests in this time.
 */
const BALANCER_GONE_QUIET_MS = 250;

/** Set when this start generated CODE_ENCRYPTION_KEY_FILE: the banner asks for a backup of it. */
let createdKeyFile: string | null = null;

/** `npm start`: database ready, demo data on an empty database, the API here and the workers in a child process. */
const { services, http } = await startOrExit(async () => {
  const services = await bootstrap({ prepareDatabase: true, onKeyFileCreated: (file) => (createdKeyFile = file) });
  const { config, logger } = services;
  exitOnUncaught(services.logger);
  if (await isDatabaseEmpty(services.db)) {
    await seedDemoData(services.db, config);
    logger.info('demo data seeded; run `npm run -s seed -- --json` for the demo credentials');
  }
  const app = createApp(services);
  return { services, http: await listen(app.fetch, createLane(services), config) };
});

// Workers start once the port is ours: a start that fails on the port has taken no job.
const workers = services.config.RUN_WORKERS ? startWorkerProcess(services) : null;

onShutdown(services.logger, services.config.SHUTDOWN_TIMEOUT_MS, async (deadline) => {
  const workersStopped = workers?.close(deadline);
  // Out of a load balancer's rotation first: /ready fails and answers close their connections, while requests are
  // still served for SHUTDOWN_DRAIN_DELAY_MS, and then while the balancer still sends some (its checks ran late), for
  // up to as long again but never more than half the time left, which stays for the requests in flight. Then stop
  // accepting and let those finish while the worker process finishes its jobs, then the connections.
  services.lifecycle.draining = true;
  http.closeConnectionsAfterAnswers();
  const drainDelay = services.config.SHUTDOWN_DRAIN_DELAY_MS;
  await until(deadline, sleep(drainDelay));
  await http.untilQuiet(BALANCER_GONE_QUIET_MS, Math.min(drainDelay, (deadline - Date.now()) / 2));
  await Promise.all([until(deadline, http.drain()), workersStopped]);
  await services.close(deadline);
});

// The banner once the first worker process is ready, or has failed to start: the API serves either way.
const workersReady = await workers?.firstStart;
process.stdout.write(banner(services.config, createdKeyFile, workersReady === false));
services.logger.info({ port: services.config.PORT, workers: services.lifecycle.workers ?? 'none' }, 'listening');
