import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver that answers 204, counts and notes when each message first arrived: the bench measures the
 * sender, not a verifier. Requests to a path under `/slow` are answered `slowMs` later (a receiver that takes its time).
 */
export async function startCountingReceiver({ slowMs = 9000 } = {}) {
  let received = 0;
  /** When each message first reached the receiver (epoch ms), by its webhook-id: how long the sender took to send. */
  const firstArrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && !firstArrivals.has(id)) firstArrivals.set(id, Date.now());
    req.resume();
    req.on('end', () => {
      received += 1;
      if (req.url?.startsWith('/slow')) setTimeout(() => res.writeHead(204).end(), slowMs);
      else res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/hook`,
    slowUrl: `${origin}/slow`,
    received: () => received,
    firstArrival: (messageId: string) => firstArrivals.get(messageId),
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}
