import { createServer, type Server } from 'node:http';
import { metricsAccess } from '../src/lib/bearer.js';
import type { Services } from '../src/runtime/services.js';

/**
 * GET /metrics of a worker-only process (C16: job durations and failures, status changes, queue depth), on
 * WORKER_METRICS_PORT: the API's /metrics shows only what its own process did. Nothing else is served, and that
 * only with `Authorization: Bearer $METRICS_TOKEN` (C16), as on the API port.
 */
export async function serveWorkerMetrics({ config, metrics }: Services, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const access = metricsAccess(req.headers.authorization, config.METRICS_TOKEN);
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics' || access === 'hidden') return void res.writeHead(404).end();
    if (access === 'refused') return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"' }).end();
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
