import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setImmediate as setImmediatePromise, setTimeout as sleep } from 'node:timers/promises';
import { getRequestListener } from '@hono/node-server';
import { ERRORS } from '../core/errors.js';
import type { Lane } from './cached-lane.js';

/**
 * The HTTP limits (C2), set here and nowhere else, and documented in the README.
 * - Request headers: at most MAX_HEADER_BYTES in all, else 431.
 * - Bodies: MAX_BODY_BYTES for JSON and form bodies, MAX_UPLOAD_BYTES for `text/plain` code imports,
 *   MAX_CALLBACK_BYTES for providers' callbacks (read before their signature can be checked), else 413, answered as
 *   soon as the size is known.
 * - After an answer, what is left of the request's body is read and dropped, at most LINGER_BYTES for at most
 *   LINGER_MS, then the connection closes: a client that sends its body before reading still reads its answer,
 *   and an upload nobody will use costs the service little.
 */
export const LIMITS = {
  MAX_HEADER_BYTES: 16 * 1024,
  MAX_BODY_BYTES: 1024 * 1024,
  MAX_UPLOAD_BYTES: 100 * 1024 * 1024,
  MAX_CALLBACK_BYTES: 64 * 1024,
  LINGER_BYTES: 4 * 1024 * 1024,
  LINGER_MS: 5000,
} as const;

type Fetch = (request: Request, env?: unknown) => Response | Promise<Response>;

/** Requests that health checks and scrapers send whether or not the process is in a load balancer's rotation. */
const PROBE = /^\/(?:health|ready|metrics)(?:[?#]|$)/;

/** The body of a failure answered before any route runs, in the envelope of the interface asked for. */
function earlyFailure(status: 400 | 408 | 431, requestLine: string): string {
  const message = status === 431 ? ERRORS.headers_too_large.message : status === 408 ? ERRORS.request_timeout.message : ERRORS.bad_request.message;
  const interfaceB = / \/license-api(?:[/?# ]|$)/.test(requestLine);
  return JSON.stringify(interfaceB ? { status: 'error', msg: message } : { status: 'failed', errors: message });
}

/** A failure the HTTP parser answers before any route runs. */
function parserFailure(status: 400 | 408 | 431, rawPacket: Buffer | undefined): string {
  const body = earlyFailure(status, rawPacket?.subarray(0, 256).toString('latin1') ?? '');
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Ends a connection after its answer without resetting it: what the client still sends is read and
 * dropped for a while, so a client that is mid-upload reads the answer instead of a connection reset.
 */
function closeGently(socket: Socket, answer: string): void {
  socket.on('error', () => {});
  socket.end(answer);
  socket.resume();
  setTimeout(() => socket.destroy(), LIMITS.LINGER_MS).unref();
}

/**
 * After the answer: the rest of a body nobody read (an early refusal, a 413) is read and dropped within the
 * LINGER bounds, then the connection closes; a body that ends within them leaves a keep-alive connection usable.
 * Resolves once the dropping is over (at once when there is nothing to drop).
 */
function dropRestOfBody(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  const socket = req.socket;
  const keptAlive = res.shouldKeepAlive;
  // An answer that closes the connection: Node closes it as soon as the answer is written, which resets a client
  // still sending (and can erase the answer on its side). Half-close instead, as after a parser failure.
  if (!keptAlive) socket.destroySoon = () => void socket.end();
  const close = () => socket.destroy();
  const timer = setTimeout(close, LIMITS.LINGER_MS).unref();
  let dropped = 0;
  // Whoever was reading the body (a handler's stream) is done with it: the bytes are ours to drop now.
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > LIMITS.LINGER_BYTES) close();
  });
  // A kept-alive connection goes on to its next request once the body ended; a closing one waits for the client.
  if (keptAlive) req.once('end', () => clearTimeout(timer));
  req.resume();
  return new Promise((resolve) => {
    const closed = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.once('close', closed);
    // A kept-alive socket serves further requests: one listener per request left on it would pile up.
    if (keptAlive) {
      req.once('close', () => {
        socket.off('close', closed);
        resolve();
      });
    }
  });
}

/** Host headers seen, and whether a URL can be built from each (a port past 65535 or `1.2.3.4.5` cannot). */
const usableHosts = new Map<string, boolean>();

function usableHost(host: string | undefined): boolean {
  // Without one, the request's URL is built from the server's own host name.
  if (host === undefined) return true;
  let usable = usableHosts.get(host);
  if (usable === undefined) {
    usable = URL.canParse(`http://${host}`);
    if (usableHosts.size >= 1000) usableHosts.clear();
    usableHosts.set(host, usable);
  }
  return usable;
}

export type HttpServer = {
  server: Server;
  /** From now on every answer closes its connection, so clients and load balancers open their next one elsewhere. */
  closeConnectionsAfterAnswers: () => void;
  /**
   * Resolves once no request but a probe's has arrived for `quietMs` (counted from `closeConnectionsAfterAnswers`
   * on), or after `atMostMs`. A load balancer that still sends requests has not yet taken this process out of
   * rotation, and may send the next one over a kept-alive connection that closing the port would cut: HTTP/1.1
   * cannot close an idle connection without that race, so the process waits for the balancer to stop.
   */
  untilQuiet: (quietMs: number, atMostMs: number) => Promise<void>;
  /**
   * Stops accepting and resolves once every request in flight has its answer fully written (C20); the
   * connections left (idle keep-alive ones) are closed then.
   */
  drain: () => Promise<void>;
};

/**
 * Serves `fetch` on HOST:PORT with the limits above. Bodies a handler did not read (an early 401, a 413) are
 * dropped after the answer within the LINGER bounds rather than cut off, so the client gets to read the answer.
 */
export function serveHttp(fetch: Fetch, { port, hostname, lane }: { port: number; hostname: string; lane?: Lane }): HttpServer {
  const listener = getRequestListener(fetch, {
    hostname,
    autoCleanupIncoming: false,
    // A request Node could parse but that names no URL we can build (a malformed Host header, say).
    errorHandler: () => Response.json({ status: 'failed', errors: ERRORS.bad_request.message }, { status: 400 }),
  });
  const server = createServer({ maxHeaderSize: LIMITS.MAX_HEADER_BYTES });
  server.listen(port, hostname);
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    closeGently(socket, parserFailure(status, err.rawPacket));
  });

  // `lane` first: it answers the requests it can without the framework (cached-lane.ts), the others go to `fetch`.
  // A request counts until its response is on the wire, not merely until the handler returned, and then while the
  // rest of its body is being dropped.
  let inFlight = 0;
  let idle: (() => void) | null = null;
  let keepAlive = true;
  let lastRequestAt = 0;
  const done = () => {
    if (--inFlight === 0) idle?.();
  };
  server.on('request', (req, res) => {
    if (!keepAlive) {
      res.shouldKeepAlive = false;
      if (!PROBE.test(req.url ?? '')) lastRequestAt = performance.now();
    }
    inFlight++;
    let dropping: Promise<void> = Promise.resolve();
    // Before Node's own handler, which would otherwise drop the rest of the body without counting it.
    res.prependOnceListener('finish', () => (dropping = dropRestOfBody(req, res)));
    res.once('close', () => void dropping.then(done));
    // A Host no URL can be built from is the client's mistake (400), before any route or the lane reads it.
    if (!usableHost(req.headers.host)) {
      const body = earlyFailure(400, ` ${req.url ?? ''} `);
      res.writeHead(400, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff' }).end(body);
      return;
    }
    const fullPath = () => void listener(req, res);
    // A lane that fails leaves the request to the full path, which answers it (or its failure) as for any request.
    const laneFailed = () => (res.headersSent ? res.destroy() : fullPath());
    let answered: boolean | Promise<boolean> = false;
    try {
      answered = lane?.(req, res) ?? false;
    } catch {
      laneFailed();
      return;
    }
    if (answered === false) fullPath();
    else if (answered !== true) answered.then((sent) => (sent ? undefined : fullPath()), laneFailed);
  });
  // A client that waits for `100 Continue` before sending its body gets it only once a route starts reading the
  // body: a refusal decided on the headers alone (413, 401) is answered before a byte of the body is sent.
  server.on('checkContinue', (req, res) => {
    req.once('resume', () => {
      if (!res.headersSent) res.writeContinue();
    });
    server.emit('request', req, res);
  });
  const drain = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
    server.closeAllConnections();
    await closed;
  };
  const untilQuiet = async (quietMs: number, atMostMs: number) => {
    const end = performance.now() + atMostMs;
    for (let now = performance.now(); now < end; now = performance.now()) {
      const quietAt = lastRequestAt + quietMs;
      if (quietAt <= now) return;
      await sleep(Math.min(quietAt, end) - now);
      // A process starved of CPU runs its timers before it reads its sockets: requests already received count first
      // (one turn of the event loop accepts a waiting connection, the next reads its request).
      await setImmediatePromise();
      await setImmediatePromise();
    }
  };
  const closeConnectionsAfterAnswers = () => {
    keepAlive = false;
    lastRequestAt = performance.now();
  };
  return { server, drain, untilQuiet, closeConnectionsAfterAnswers };
}
