import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export type Limiter = RateLimiterRedis;

/**
 * A fixed-window limiter kept in Redis, so it holds across processes. If Redis is unreachable
 * the per-process memory limiter stands in rather than failing every request.
 */
export function createLimiter(redis: Redis, keyPrefix: string, points: number, durationSeconds: number): Limiter {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: durationSeconds,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:memory`, points, duration: durationSeconds }),
  });
}

/** Seconds until every key is allowed again, or 0 when none of them is over its limit. */
export async function blockedForSeconds(checks: Array<[Limiter, string]>): Promise<number> {
  const states = await Promise.all(checks.map(([limiter, key]) => limiter.get(key)));
  let wait = 0;
  states.forEach((state, i) => {
    if (state && state.consumedPoints >= checks[i]![0].points) wait = Math.max(wait, Math.ceil(state.msBeforeNext / 1000));
  });
  return wait;
}

/** Counts one attempt against every key; returns the seconds to wait when any limit is exceeded, else 0. */
export async function consumeAll(checks: Array<[Limiter, string]>): Promise<number> {
  const outcomes = await Promise.allSettled(checks.map(([limiter, key]) => limiter.consume(key)));
  let wait = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') {
      if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
      wait = Math.max(wait, Math.ceil(outcome.reason.msBeforeNext / 1000) || 1);
    }
  }
  return wait;
}
