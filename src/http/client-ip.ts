import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Services } from '../runtime/services.js';
import type { AppEnv } from './context.js';
import type { Config } from '../core/env.js';
import { plainAddress } from '../lib/allow-list.js';

/**
 * What the load balancer in front said in an `X-Forwarded-*` header: its last entry. A balancer appends to (or
 * replaces) what the client sent, so earlier entries are the client's own words. Only read with TRUST_PROXY.
 */
export const forwarded = (c: Context<AppEnv>, header: 'x-forwarded-for' | 'x-forwarded-proto' | 'x-forwarded-host') => lastEntry(c.req.header(header));

/** The last entry of a comma-separated header value (the one the nearest proxy wrote). */
export const lastEntry = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value.at(-1) : value)?.split(',').at(-1)?.trim() || undefined;

/** Processes already told that X-Forwarded-For arrives while TRUST_PROXY is off. */
const warned = new WeakSet<Services>();

/**
 * The caller's address: the socket peer, or, when TRUST_PROXY=true, the last X-Forwarded-For entry: the address
 * the load balancer in front appended. Earlier entries are whatever the client sent, so a client cannot pick a
 * fresh address for each failed login. Behind a proxy without TRUST_PROXY every client shares the proxy's address
 * (and its failed-login allowance, C3), so the first forwarded request says so in the log.
 */
export function clientIp(c: Context<AppEnv>): string {
  const { config, logger } = c.get('services');
  const address = forwarded(c, 'x-forwarded-for');
  if (address && !config.TRUST_PROXY && !warned.has(c.get('services'))) {
    warned.add(c.get('services'));
    logger.warn('requests carry X-Forwarded-For but TRUST_PROXY is off: every client counts as the proxy address');
  }
  return addressOf(config, address, () => getConnInfo(c).remote.address);
}

/**
 * The one rule of clientIp, for a caller holding node's request rather than a Hono context (the cached-read lane):
 * the forwarded address under TRUST_PROXY, else the socket's, as a person writes it (`::ffff:` taken off).
 */
export function addressOf(config: Pick<Config, 'TRUST_PROXY'>, forwardedFor: string | undefined, socketAddress: () => string | undefined): string {
  if (config.TRUST_PROXY && forwardedFor) return plainAddress(forwardedFor);
  try {
    const address = socketAddress();
    return address ? plainAddress(address) : 'unknown';
  } catch {
    return 'unknown';
  }
}
