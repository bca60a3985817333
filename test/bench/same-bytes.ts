import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * The read ceiling: a bare node:http server answering each path with the very bytes the service sent for it
 * (BODIES_FILE: a JSON object path → body), and nothing else: no routing library, auth, validation or logging.
 */
const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.env.BODIES_FILE!, 'utf8')) as Record<string, string>).map(([path, body]) => [path, Buffer.from(body)]));
const server = createServer((req, res) => {
  const body = bodies.get(req.url ?? '');
  if (!body) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
