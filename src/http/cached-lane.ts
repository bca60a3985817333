import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../runtime/services.js';
import type { Caller } from '../core/caller.js';
import { laneRouteOf, type LaneAnswer } from './cached-json.js';
import { addressOf, lastEntry } from './client-ip.js';
import { PROTECTIVE_HEADERS } from './headers.js';
import { recordServed } from './request-log.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';
import { baseUrlOf } from './urls.js';

/**
 * Answers the request and returns true, or returns false having sent nothing: the full path answers it. A promise
 * when it has to wait (for the caller's variant of an answer).
 */
export type Lane = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/** What requireToken would let through without waiting, or null: see knownSignedInAccount. */
export type SignedInNow = (services: Services, authorization: string | undefined, address: () => string) => Caller | null;

const REQUEST_ID_HEADER_KEY = REQUEST_ID_HEADER.toLowerCase();

/**
 * The cached-read lane: a read the full path has offered (offerLane in cached-json.ts: a catalog answer kept as bytes,
 * an order list) is answered straight from node's request, before Hono builds its Request, Context and Response
 * objects — which were most of such a read's cost. It keeps every promise of the full path: the token is checked (a
 * token the process cache holds, unexpired, from an address the account allows), the path and query are those the
 * full path validated when it offered them, the caller gets its own answer (the route's `answerFor`, which may read the
 * database), with the same headers and bytes, log line and request metrics. Anything else goes the full path: no or
 * unknown token, a per-account request limit, a body, If-None-Match, HEAD, a path and query not offered (yet, or any
 * more: the catalog changed), an answer not kept or that could not be read.
 */
export function cachedReadLane(services: Services, signedInNow: SignedInNow): Lane {
  // The base URL of each Host (and forwarded headers) seen: building a URL per request was a cost of its own.
  const bases = new Map<string, string>();
  const baseOf = (host: string, proto: string | undefined, forwardedHost: string | undefined) => {
    const key = `${host} ${proto ?? ''} ${forwardedHost ?? ''}`;
    let base = bases.get(key);
    if (base === undefined) {
      if (bases.size >= 1000) bases.clear();
      const forwarded = { 'x-forwarded-proto': proto, 'x-forwarded-host': forwardedHost };
      base = baseUrlOf(services.config, `http://${host}`, (name) => lastEntry(forwarded[name]));
      bases.set(key, base);
    }
    return base;
  };
  return (req, res) => {
    const started = performance.now();
    const { host, authorization } = req.headers;
    // serveHttp has refused a Host no URL can be built from; without one, the full path names the server itself.
    if (req.method !== 'GET' || !host || req.headers['if-none-match'] !== undefined || hasBody(req)) return false;
    const base = baseOf(host, joined(req.headers['x-forwarded-proto']), joined(req.headers['x-forwarded-host']));
    const pathAndQuery = req.url ?? '';
    // The path first: most requests that are not such reads (placements, say) end here, before the token's digest.
    const lane = laneRouteOf(services, base, pathAndQuery);
    if (!lane) return false;
    const caller = signedInNow(services, authorization, () =>
      addressOf(services.config, lastEntry(req.headers['x-forwarded-for']), () => req.socket.remoteAddress),
    );
    if (caller === null) return false;
    const send = (answer: LaneAnswer | null) => {
      if (!answer) return false;
      const requestId = requestIdFor(joined(req.headers[REQUEST_ID_HEADER_KEY]));
      res.writeHead(200, headersOf({ 'x-request-id': requestId, etag: answer.etag, 'content-type': 'application/json' }, byteLength(answer.body)));
      res.end(answer.body);
      recordServed(services, { requestId, method: 'GET', route: lane.route, status: 200, accountId: caller.id, testMode: !caller.livemode }, started);
      return true;
    };
    const answer = lane.answerFor(caller);
    // An answer that could not be read: the full path reads it again, and answers a failure in its own envelope.
    return answer instanceof Promise ? answer.then(send, () => false) : send(answer);
  };
}

const STATIC_HEADERS: Record<string, string> = Object.fromEntries(Object.entries(PROTECTIVE_HEADERS).map(([name, value]) => [name.toLowerCase(), value]));
/** The full path's order (@hono/node-server): the Web `Headers` of the answer, sorted by name, then its length (as node-server names it). */
const HEADER_ORDER = [...Object.keys(STATIC_HEADERS), 'x-request-id', 'etag', 'content-type'].sort();

function headersOf(own: Record<'x-request-id' | 'etag' | 'content-type', string | undefined>, length: number): Record<string, string | number> {
  const headers: Record<string, string | number> = {};
  for (const name of HEADER_ORDER) {
    const value = STATIC_HEADERS[name] ?? own[name as keyof typeof own];
    // An answer without an ETag (an order list) has no such line.
    if (value !== undefined) headers[name] = value;
  }
  headers['Content-Length'] = length;
  return headers;
}

const byteLength = (body: LaneAnswer['body']) => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);

/** A header as the Web `Headers` of the full path read it: repeated values joined. */
const joined = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
