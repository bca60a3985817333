import type { Context } from 'hono';
import { clientIp } from '../../http/client-ip.js';
import type { AppEnv } from '../../http/context.js';
import { AppError } from '../../errors.js';
import { blockedForSeconds, consumeAll, createLimiter, type Limiter, type LimitCheck } from '../../lib/rate-limit.js';
import type { Services } from '../../services.js';
import { isoMicros } from '../../lib/time.js';
import { exchangeKeyPair } from './service.js';

/** Failed exchanges per (public key, client address) and per client address (C3). */
export type AuthLimiters = { perKeyAndAddress: Limiter; perAddress: Limiter };

export function createAuthLimiters({ redis, config }: Services): AuthLimiters {
  const prefix = `${config.BULLMQ_PREFIX}:auth-failures`;
  return {
    perKeyAndAddress: createLimiter(redis, `${prefix}:key`, config.AUTH_FAILURES_PER_KEY, config.AUTH_FAILURE_WINDOW_SECONDS),
    perAddress: createLimiter(redis, `${prefix}:ip`, config.AUTH_FAILURES_PER_IP, config.AUTH_FAILURE_WINDOW_SECONDS),
  };
}

/** A1 POST generate/authorization-token: headers PublicKey and SecretKey, no body. */
export function generateTokenHandler(limiters: AuthLimiters) {
  return async (c: Context<AppEnv>) => {
    const publicKey = c.req.header('publickey')?.trim() ?? '';
    const secretKey = c.req.header('secretkey')?.trim() ?? '';
    const missing = [
      ...(publicKey ? [] : ['The public key field is required.']),
      ...(secretKey ? [] : ['The secret key field is required.']),
    ];
    if (missing.length) throw new AppError('validation', missing);

    // Someone failing with another's public key uses up only their own address's attempts.
    const address = clientIp(c);
    const checks: LimitCheck[] = [
      [limiters.perKeyAndAddress, publicKey, address],
      [limiters.perAddress, address],
    ];
    const wait = await blockedForSeconds(checks);
    if (wait > 0) throw new AppError('rate_limited', undefined, { 'Retry-After': String(wait) });

    const { db, config } = c.var.services;
    const issued = await exchangeKeyPair(db, publicKey, secretKey, config.TOKEN_TTL_SECONDS);
    if (!issued) {
      await consumeAll(checks);
      throw new AppError('invalid_credentials');
    }
    return c.json({
      status: 'success',
      message: 'Token generated successfully.',
      bearer_token: issued.token,
      expires_at: isoMicros(issued.expiresAt),
    });
  };
}
