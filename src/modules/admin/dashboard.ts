import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Services } from '../../services.js';

/** The bull-board queue dashboard over every queue of the service, served under `basePath`. */
export function queueDashboard(services: Services, basePath: string) {
  const adapter = new HonoAdapter(serveStatic).setBasePath(basePath);
  createBullBoard({
    queues: services.queues.all.map((queue) => new BullMQAdapter(queue, { readOnlyMode: false })),
    serverAdapter: adapter,
  });
  return adapter.registerPlugin();
}
