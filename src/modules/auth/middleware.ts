import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../http/context.js';
import { TOKEN } from '../../http/contract.js';
import { AppError, addressNotAllowed } from '../../core/errors.js';
import { clientIp } from '../../http/client-ip.js';
import type { Services } from '../../runtime/services.js';
import { sha256 } from '../../lib/crypto.js';
import { consumeAll, type Limiter } from '../../lib/rate-limit.js';
import { isoMicros } from '../../lib/time.js';
import { accountForToken } from './service.js';
import type { Caller } from '../../core/caller.js';

const isoToMillis = (pgTimestamp: string) => Date.parse(isoMicros(pgTimestamp));

/**
 * `Authorization: <token>` or `Authorization: Bearer <token>` (C3); with `schemeRequired`, only the second (C12's form
 * of an api key: another scheme's credentials are no key). Key-pair headers do not authenticate here.
 */
export function bearerToken(header: string | undefined, { schemeRequired = false } = {}): string | null {
  if (!header || (schemeRequired && !/^Bearer\s/i.test(header))) return null;
  const token = header.replace(/^Bearer\s+/i, '').trim();
  return token.length > 0 && token.length <= 512 ? token : null;
}

type TokenAccount = Awaited<ReturnType<typeof accountForToken>>;

/** The token cache's key: the token's digest, never the token. */
const tokenKey = (token: string) => sha256(token).toString('base64');

const callerOf = ({ id, currency, currencySymbol, priceTierId, scope, livemode }: NonNullable<TokenAccount>): Caller => ({
  id,
  currency,
  currencySymbol,
  priceTierId,
  scope,
  livemode,
});

/** What a read-scope token may do (C26): read. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Tokens end by expiry, checked on every hit, or with their key (C25), which drops every process's cached tokens. */
const signedInAccount = (found: TokenAccount | undefined) => (found && isoToMillis(found.expiresAt) > Date.now() ? found : null);

/**
 * Token checks are on every request, so the lookup goes through the process cache (keyed by the
 * token's digest, never the token). `writesNothing`: a route that changes nothing whatever its method (the player
 * check), open to read-scope tokens.
 */
const tokenGuard = ({ writesNothing }: { writesNothing: boolean }) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    const { db, tokenCache } = c.get('services');
    const found = signedInAccount(token ? await tokenCache.get(tokenKey(token), () => accountForToken(db, token)) : null);
    if (!found) throw new AppError('unauthenticated');
    if (found.allowList) {
      const address = clientIp(c);
      if (!found.allowList.allows(address)) throw addressNotAllowed(address);
    }
    if (found.scope === 'read' && !writesNothing && !READS.has(c.req.method)) throw new AppError('read_only_key');
    c.set('account', callerOf(found));
    const limiter = accountLimiter(c.get('services'));
    if (limiter) {
      const wait = await consumeAll([[limiter, String(found.id)]]);
      if (wait > 0) throw new AppError('rate_limited', undefined, { 'Retry-After': String(wait) });
    }
    await next();
  });

export const requireToken = tokenGuard({ writesNothing: false });

/**
 * What requireToken would let through, decided without waiting: the account of a token the process cache already
 * holds and that has not expired, from an address its allow-list holds, when no per-account request limit applies.
 * Null: only requireToken can tell (and it answers a refusal in its envelope).
 */
export function knownSignedInAccount(services: Services, authorization: string | undefined, address: () => string): Caller | null {
  const token = bearerToken(authorization);
  if (!token || accountLimiter(services)) return null;
  const found = signedInAccount(services.tokenCache.peek<TokenAccount>(tokenKey(token)));
  if (!found || (found.allowList && !found.allowList.allows(address()))) return null;
  return callerOf(found);
}

const accountLimiters = new WeakMap<Services, Limiter | null>();

/** The optional per-account request limit (C11): ACCOUNT_REQUESTS_PER_MINUTE, off when unset. */
function accountLimiter(services: Services): Limiter | null {
  if (!accountLimiters.has(services)) {
    const { config, limiter } = services;
    const perMinute = config.ACCOUNT_REQUESTS_PER_MINUTE;
    accountLimiters.set(services, perMinute ? limiter(`${config.BULLMQ_PREFIX}:account-requests`, perMinute, 60) : null);
  }
  return accountLimiters.get(services)!;
}

/** The guard of Interface A's routes: documented as the bearer token, enforced by requireToken. */
export const signedIn = { ...TOKEN, middleware: requireToken };

/** signedIn for a POST that writes nothing (C26: a read-scope token may use it). */
export const signedInReading = { ...TOKEN, middleware: tokenGuard({ writesNothing: true }) };
