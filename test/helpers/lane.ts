import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, createLane } from '../../src/app.js';
import { serveHttp } from '../../src/http/server.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Json } from './api.js';
import type { TestApp } from './harness.js';

/** An answer as its bytes came: status, header lines in order, body, and whether it reached the app. */
export type RawAnswer = { status: number; headers: Array<[string, string]>; body: string; viaApp: boolean };

/** Header lines without those that differ by nature between two answers: the date and the request id. */
export const comparable = (answer: RawAnswer) => answer.headers.filter(([name]) => name !== 'Date' && name !== 'x-request-id');

/**
 * The app of `app.services` served with the cached-read lane (src/http/cached-lane.ts) in front, behind a fetch that
 * counts the requests reaching the app: each answer tells which path gave it. The services' log lines are kept.
 */
export async function serveCountingApp(app: TestApp) {
  const written: string[] = [];
  app.services.logger = createLogger('info', { write: (chunk: string) => void written.push(chunk) });
  const hono = createApp(app.services);
  let reachedApp = 0;
  const http = serveHttp(
    (request) => {
      reachedApp += 1;
      return hono.fetch(request);
    },
    { port: 0, hostname: '127.0.0.1', lane: createLane(app.services) },
  );
  await new Promise((resolve) => http.server.once('listening', resolve));
  const base = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;

  /** One request with `headers` (and `body`), as the bytes came. */
  const send = (path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<RawAnswer> => {
    const before = reachedApp;
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = res.rawHeaders;
          const pairs: Array<[string, string]> = [];
          for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
          resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks).toString(), viaApp: reachedApp > before });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };
  return {
    send,
    get: (path: string, headers: Record<string, string> = {}, method = 'GET') => send(path, headers, method),
    logLines: (): Json[] => written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Json),
    /** GET requests answered with 200 under `route`, as /metrics counts them. */
    requestCount: async (route: string) => {
      const line = (await app.services.metrics.render()).split('\n').find((l) => l.startsWith(`http_requests_total{method="GET",route="${route}",status="200"}`));
      return Number(line?.split(' ').at(-1) ?? 0);
    },
    close: () => http.drain(),
  };
}
