import { bootstrap, exitOnUncaught, onShutdown, startOrExit, StartupError } from '../src/startup/index.js';
import { startWorkers } from './index.js';
import { fulfilmentPace, type FulfilmentPace } from '../src/modules/fulfilment/index.js';
import type { Services } from '../src/runtime/services.js';
import { serveWorkerMetrics } from './metrics-server.js';
import type { FromWorkerProcess, ToWorkerProcess } from './process.js';

/** Forked by `npm start` (workers/process.ts): its IPC channel to the API process. */
const parent = process.send?.bind(process);

/** `npm run worker`: the workers alone, for hosts that run no API; also the worker process `npm start` forks. */
const { services, workers, metricsServer, pace } = await startOrExit(async () => {
  // Forked, the API process has created and migrated the database already: only check it is migrated.
  const services = await bootstrap({ prepareDatabase: !parent });
  exitOnUncaught(services.logger);
  const port = services.config.WORKER_METRICS_PORT;
  // Before any job is taken: a port that cannot be used fails the start naming the variable.
  const metricsServer =
    port === undefined
      ? null
      : await serveWorkerMetrics(services, port).catch((err: NodeJS.ErrnoException) => {
          throw new StartupError(`WORKER_METRICS_PORT: ${port} cannot be used (${err.code ?? err.message})`);
        });
  // Forked beside the API: card fulfilment yields to it while it is busy (its load comes over the IPC channel, below).
  const pace = parent && services.config.PLACEMENT_FIRST ? yieldingPace(services) : undefined;
  const workers = await startWorkers(services, { pace });
  services.logger.info({ metricsPort: port ?? null }, 'workers started');
  return { services, workers, metricsServer, pace };
});
const shutDown = onShutdown(services.logger, services.config.SHUTDOWN_TIMEOUT_MS, async (deadline) => {
  metricsServer?.close();
  await workers.close(deadline);
  await services.close(deadline);
});

// Forked: answer the API process's scrapes, follow its load, and stop when it has gone.
if (parent) {
  const tell = (message: FromWorkerProcess) => void (process.connected && parent(message));
  process.on('message', (message: ToWorkerProcess) => {
    if (message.type === 'load') return pace?.observe(message.inFlight);
    services.metrics.ownSeries().then(
      (series) => tell({ type: 'series', id: message.id, series }),
      () => tell({ type: 'series', id: message.id, series: [] }),
    );
  });
  // It may have gone while this process was starting, before anyone listened for it.
  if (process.connected) process.once('disconnect', () => shutDown('the API process has gone'));
  else shutDown('the API process has gone');
  tell({ type: 'ready' });
}

/** The pace of card fulfilment beside the API, each change of it shown on /metrics and in the debug log. */
function yieldingPace({ metrics, logger }: Services): FulfilmentPace {
  return fulfilmentPace((yielding) => {
    metrics.fulfilmentYielding(yielding);
    logger.debug({ yielding }, yielding ? 'the API is busy: fulfilment yields to it' : 'the API is calm: fulfilment at its usual pace');
  });
}
