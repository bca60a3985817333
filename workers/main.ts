import { bootstrap, exitOnUncaught, onShutdown, startOrExit, StartupError } from '../src/bootstrap.js';
import { startWorkers } from './index.js';
import { serveWorkerMetrics } from './metrics-server.js';

/** `npm run worker`: the workers alone, for hosts that run no API. */
const { services, workers, metricsServer } = await startOrExit(async () => {
  const services = await bootstrap({ prepareDatabase: true });
  exitOnUncaught(services.logger);
  const port = services.config.WORKER_METRICS_PORT;
  // Before any job is taken: a port that cannot be used fails the start naming the variable.
  const metricsServer =
    port === undefined
      ? null
      : await serveWorkerMetrics(services, port).catch((err: NodeJS.ErrnoException) => {
          throw new StartupError(`WORKER_METRICS_PORT: ${port} cannot be used (${err.code ?? err.message})`);
        });
  const workers = await startWorkers(services);
  services.logger.info({ metricsPort: port ?? null }, 'workers started');
  return { services, workers, metricsServer };
});
onShutdown(services.config.SHUTDOWN_TIMEOUT_MS, async (deadline) => {
  metricsServer?.close();
  await workers.close(deadline);
  await services.close(deadline);
});
