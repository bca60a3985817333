import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.js';
import { AppError } from '../core/errors.js';
import { ADMIN } from './contract.js';
import { bearerToken, isConfiguredSecret } from '../lib/bearer.js';

/** HTTP Basic with any user name: the password is the token. */
function basicPassword(header: string | undefined): string | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : decoded.slice(colon + 1);
}

/**
 * C13: every /admin route needs `Authorization: Bearer $ADMIN_TOKEN`. Without ADMIN_TOKEN the
 * whole surface answers 503 rather than opening. With `basic`, HTTP Basic is accepted as well and a
 * refusal asks the browser for credentials.
 */
export const requireAdmin = (options: { basic?: boolean } = {}) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const expected = c.get('services').config.ADMIN_TOKEN;
    if (!expected) throw new AppError('admin_disabled');
    const header = c.req.header('authorization');
    const presented = bearerToken(header) ?? (options.basic ? basicPassword(header) : null);
    if (!isConfiguredSecret(presented, expected)) {
      throw new AppError('forbidden', undefined, options.basic ? { 'WWW-Authenticate': 'Basic realm="admin"' } : {});
    }
    await next();
  });

/**
 * The guard of an operator route (C13): documented as `adminToken` and enforced on the route itself, so a
 * router mounted under /admin is protected wherever it is mounted.
 */
export const adminOnly = { ...ADMIN, middleware: requireAdmin() };
