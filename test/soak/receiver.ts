import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The soak's webhook receiver: one path per account's endpoint (`/hook/<n>`), answering 204 and counting each event
 * (`webhook-id`) it accepted once; an endpoint made `downFor` a while answers 503 meanwhile.
 */
export async function startSoakReceiver() {
  const accepted = new Set<string>();
  let requests = 0;
  let refused = 0;
  const downUntil = new Map<number, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      const endpoint = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1]);
      if ((downUntil.get(endpoint) ?? 0) > Date.now()) {
        refused += 1;
        res.writeHead(503).end('down');
        return;
      }
      accepted.add(`${endpoint}/${String(req.headers['webhook-id'])}`);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urlFor: (endpoint: number) => `${origin}/hook/${endpoint}`,
    downFor: (endpoint: number, ms: number) => void downUntil.set(endpoint, Date.now() + ms),
    isDown: (endpoint: number) => (downUntil.get(endpoint) ?? 0) > Date.now(),
    /** Distinct events accepted (per endpoint), requests in all, and requests answered 503. */
    stats: () => ({ events: accepted.size, requests, refused }),
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}
