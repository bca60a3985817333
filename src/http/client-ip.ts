import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Services } from '../services.js';
import type { AppEnv } from './context.js';

/** Processes already told that X-Forwarded-For arrives while TRUST_PROXY is off. */
const warned = new WeakSet<Services>();

/**
 * The caller's address: the socket peer, or the first X-Forwarded-For hop when TRUST_PROXY=true.
 * Behind a proxy without TRUST_PROXY every client shares the proxy's address (and its failed-login
 * allowance, C3), so the first forwarded request says so in the log.
 */
export function clientIp(c: Context<AppEnv>): string {
  const { config, logger } = c.var.services;
  const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
  if (config.TRUST_PROXY && forwarded) return forwarded;
  if (forwarded && !warned.has(c.var.services)) {
    warned.add(c.var.services);
    logger.warn('requests carry X-Forwarded-For but TRUST_PROXY is off: every client counts as the proxy address');
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
