import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { accountForToken } from './service.js';

/** `Authorization: <token>` or `Authorization: Bearer <token>` (C3). Key-pair headers do not authenticate here. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const token = header.replace(/^Bearer\s+/i, '').trim();
  return token.length > 0 && token.length <= 512 ? token : null;
}

export const requireToken = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header('authorization'));
  const account = token ? await accountForToken(c.var.services.db, token) : null;
  if (!account) throw new AppError('unauthenticated');
  c.set('account', account);
  await next();
});
