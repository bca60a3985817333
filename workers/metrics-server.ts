import { createServer, type Server } from 'node:http';
import type { Services } from '../src/services.js';

/**
 * GET /metrics of a worker-only process (C16: job durations and failures, status changes, queue depth), on
 * WORKER_METRICS_PORT: the API's /metrics shows only what its own process did. Nothing else is served.
 */
export async function serveWorkerMetrics({ config, metrics }: Services, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') return void res.writeHead(404).end();
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.HOST, () => resolve());
  });
  return server;
}
