import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The caller's own request id when it is a plain token of at most 255 characters, else a new UUID. */
export const requestIdFor = (sent: string | undefined): string => (sent && sent.length <= 255 && !/[^\w\-=]/.test(sent) ? sent : randomUUID());

/** Names every request (its log line, server-side failures and the `X-Request-Id` response header). */
export const requestIdentity: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = requestIdFor(c.req.header(REQUEST_ID_HEADER));
  c.set('requestId', id);
  c.header(REQUEST_ID_HEADER, id);
  await next();
};
