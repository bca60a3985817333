import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * The read ceiling: a bare node:http server answering each path with the very bytes the service sent for it, header
 * lines and body (BODIES_FILE: a JSON object path → {body, headers}; the request id as it was then), and nothing
 * else: no routing library, auth, validation or logging.
 */
type Answer = { body: string; headers: Record<string, string> };
const answers = new Map(
  Object.entries(JSON.parse(readFileSync(process.env.BODIES_FILE!, 'utf8')) as Record<string, Answer>).map(([path, { body, headers }]) => {
    const bytes = Buffer.from(body);
    return [path, { bytes, headers: { ...headers, 'content-length': bytes.length } }];
  }),
);
const server = createServer((req, res) => {
  const answer = answers.get(req.url ?? '');
  if (!answer) return void res.writeHead(404).end();
  res.writeHead(200, answer.headers).end(answer.bytes);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
