import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import type { Services } from '../../runtime/services.js';
import { shownName } from '../../queues/index.js';

/**
 * Everything from this server: bull-board's page is patched (patches/@bull-board+ui+*.patch) not to ask Google for
 * its web font, and to reopen itself without the credentials of a URL such as http://x:TOKEN@host/admin/queues.
 * bull-board sets inline styles and draws some icons from data URLs.
 */
const PAGE_POLICY = ["default-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "frame-ancestors 'none'"].join('; ');

/** The bull-board queue dashboard over every queue of the service, served under `basePath`. */
export function queueDashboard(services: Services, basePath: string) {
  const adapter = new HonoAdapter(serveStatic).setBasePath(basePath);
  createBullBoard({
    queues: services.queues.all.map((queue) => new BullMQAdapter(queue, { readOnlyMode: false, displayName: shownName(queue) })),
    serverAdapter: adapter,
  });
  const board = new Hono();
  // On the answers themselves: bull-board's page and files are ready-made responses.
  board.use('*', async (c, next) => {
    await next();
    c.res.headers.set('Content-Security-Policy', PAGE_POLICY);
  });
  return board.route('/', adapter.registerPlugin());
}
