import { createServer, createConnection, type Server, type Socket } from 'node:net';
import { freePort } from './processes.js';

/**
 * A TCP relay in front of a server (PostgreSQL, say) that a test can cut, as a network partition or a
 * server that went away would, and restore on the same port.
 */
export async function tcpProxy(targetPort: number, targetHost = '127.0.0.1') {
  const sockets = new Set<Socket>();
  /** Each connection's client side and the upstream it relays to. */
  const relays: Array<[Socket, Socket]> = [];
  let server: Server | null = null;
  // A spare port, not one the kernel picks: while the relay is cut, a client's reconnection could take an ephemeral one.
  const port = await freePort();
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = createConnection({ port: targetPort, host: targetHost });
        // Either side closing or failing closes the other, as a real connection would end.
        const pair = [client, upstream];
        for (const s of pair) {
          sockets.add(s);
          s.on('error', () => {});
          s.on('close', () => {
            sockets.delete(s);
            for (const other of pair) other.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
        relays.push([client, upstream]);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await listen();
  const cut = async () => {
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = null;
    for (const s of sockets) s.destroy();
    await closed;
  };
  /** Connections stay open but nothing the clients send reaches the server any more: a server that hangs. */
  const hang = () => {
    for (const [client, upstream] of relays) client.unpipe(upstream);
  };
  return { port: () => port, cut, restore: listen, close: cut, hang };
}
