import { bootstrap, exitOnUncaught, onShutdown, startOrExit } from '../src/bootstrap.js';
import { startWorkers } from './index.js';

/** `npm run worker`: the workers alone, for hosts that run no API. */
const { services, workers } = await startOrExit(async () => {
  const services = await bootstrap({ prepareDatabase: true });
  exitOnUncaught(services.logger);
  const workers = await startWorkers(services);
  services.logger.info('workers started');
  return { services, workers };
});
onShutdown(services.config.SHUTDOWN_TIMEOUT_MS, async (deadline) => {
  await workers.close(deadline);
  await services.close(deadline);
});
