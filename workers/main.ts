import { bootstrap, onShutdown } from '../src/bootstrap.js';
import { startWorkers } from './index.js';

/** `npm run worker`: the workers alone, for hosts that run no API. */
const services = await bootstrap();
const workers = await startWorkers(services);
services.logger.info('workers started');
onShutdown(async () => {
  await workers.close();
  await services.close();
});
