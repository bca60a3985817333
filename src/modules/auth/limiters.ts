import type { Limiter } from '../../lib/rate-limit.js';
import type { Services } from '../../runtime/services.js';

/** Failed exchanges per (public key, client address) and per client address (C3). */
export type AuthLimiters = { perKeyAndAddress: Limiter; perAddress: Limiter };

export function createAuthLimiters({ limiter, config }: Services): AuthLimiters {
  const prefix = `${config.BULLMQ_PREFIX}:auth-failures`;
  return {
    perKeyAndAddress: limiter(`${prefix}:key`, config.AUTH_FAILURES_PER_KEY, config.AUTH_FAILURE_WINDOW_SECONDS),
    perAddress: limiter(`${prefix}:ip`, config.AUTH_FAILURES_PER_IP, config.AUTH_FAILURE_WINDOW_SECONDS),
  };
}
