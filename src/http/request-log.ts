import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Logger } from '../lib/logger.js';
import type { Services } from '../runtime/services.js';
import type { AppEnv } from './context.js';

/** The route label of a request no route answers: one value, so unknown paths never add series. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The pattern of the route that answered (`/admin/orders/:utr/refund`), never the raw path. Middleware is
 * registered for every method; the first route of the request's own method is the endpoint.
 */
export const routePattern = (c: Context): string => matchedRoutes(c).find((route) => route.method !== 'ALL')?.path ?? UNMATCHED_ROUTE;

/** A logger whose lines carry the request's id. */
export const requestLogger = (c: Context<AppEnv>): Logger => c.get('services').logger.child({ requestId: c.get('requestId') });

/**
 * One info line per request (request id, method, route pattern, status, duration, the account when one
 * signed in, and `mode: "test"` for a test key's token, C25) and the request series of /metrics. Nothing of the path, query string, headers or body is
 * logged: they carry keys, tokens and order-form values.
 */
export const requestLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  await next();
  // Interface A: the token's account; Interface B: the api key's owner.
  const accountId = c.get('account')?.id ?? c.get('licenseOwner')?.id;
  const testMode = c.get('account')?.livemode === false;
  recordServed(c.get('services'), { requestId: c.get('requestId'), method: c.req.method, route: routePattern(c), status: c.res.status, accountId, testMode }, started);
};

/** A request as its log line and metrics name it; `testMode`: made with a test key's token. */
export type ServedRequest = { requestId: string; method: string; route: string; status: number; accountId: number | undefined; testMode?: boolean };

/** The log line and the request series of one answered request that started at `started` (performance.now()). */
export function recordServed({ logger, metrics, load }: Pick<Services, 'logger' | 'metrics' | 'load'>, { requestId, accountId, testMode, ...request }: ServedRequest, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  metrics.requestServed(request, seconds);
  load.served(seconds);
  logger.info(
    { requestId, ...request, durationMs: Math.round(seconds * 10_000) / 10, ...(accountId === undefined ? {} : { accountId }), ...(testMode ? { mode: 'test' } : {}) },
    'request',
  );
}
