import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expectJson } from './api.js';

export type ReceivedEvent = { id: string; type: string; timestamp: string; data: Record<string, any>; raw: string };

/**
 * A local webhook receiver that checks every request with the npm `standardwebhooks` package (an
 * independent implementation of the signature), and answers `answerWith(status)` (500: a receiver that is down).
 */
export async function startReceiver(secret?: string) {
  // An endpoint's secret is known once it is registered, after its receiver is listening: see `trust`.
  let verifier = secret ? new Webhook(secret) : null;
  const received: ReceivedEvent[] = [];
  const rejected: string[] = [];
  let answer = 200;
  let answerBody: string | undefined;
  let location: string | undefined;
  let requests = 0;
  let delayMs = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    res.once('close', () => (inFlight -= 1));
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => setTimeout(answerRequest, delayMs));
    const answerRequest = () => {
      requests += 1;
      const raw = Buffer.concat(chunks).toString('utf8');
      if (answer >= 200 && answer < 300) {
        try {
          if (!verifier) throw new Error('no secret to verify with');
          const body = verifier.verify(raw, headersOf(req.headers)) as Omit<ReceivedEvent, 'id' | 'raw'>;
          received.push({ ...body, id: String(req.headers['webhook-id']), raw });
        } catch (err) {
          rejected.push(String(err));
          res.writeHead(400).end('bad signature');
          return;
        }
      }
      res.writeHead(answer, { 'content-type': 'text/plain', ...(location ? { location } : {}) }).end(answerBody ?? (answer < 300 ? 'ok' : 'receiver is down'));
    };
  });
  server.on('connection', () => (connections += 1));
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    rejected,
    requests: () => requests,
    /** The most requests it held at once, and the TCP connections they came on. */
    mostInFlight: () => mostInFlight,
    connections: () => connections,
    /** Answers each request `ms` after it came in (a slow receiver). */
    answerAfter: (ms: number) => {
      delayMs = ms;
    },
    trust: (endpointSecret: string) => {
      verifier = new Webhook(endpointSecret);
    },
    /** The status of every answer from now on, with a `Location` header when `redirectTo` is given. */
    answerWith: (status: number, redirectTo?: string, body?: string) => {
      answer = status;
      location = redirectTo;
      answerBody = body;
    },
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}

/**
 * A fresh receiver registered as an endpoint of the account `api` speaks for (`events` filters it), its secret
 * trusted: every event it receives is verified.
 */
export async function subscribeReceiver(api: { postJson: (path: string, body: unknown) => Promise<Response> }, events?: string[]) {
  const receiver = await startReceiver();
  const body = await expectJson(await api.postJson('/api/webhooks', { url: receiver.url, ...(events ? { events } : {}) }), 200);
  receiver.trust(body.message.secret);
  return { receiver, endpointId: body.message.id as number };
}

const headersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]));
