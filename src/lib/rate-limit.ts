import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';
import { sha256 } from './crypto.js';
import type { RedisClient } from './redis.js';

export type Limiter = RateLimiterRedis;

/** Makes a limiter with a key prefix, a number of points and a window in seconds (Services.limiter). */
export type LimiterFactory = (keyPrefix: string, points: number, durationSeconds: number) => Limiter;

/**
 * The per-process memory limiter that stands in while Redis is unreachable, never silently: every decision it
 * takes calls `onFallback` (a log line and a counter), since its counts are this process's alone.
 */
class StandInLimiter extends RateLimiterMemory {
  constructor(
    options: IRateLimiterOptions,
    private readonly onFallback: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.onFallback();
    return super.consume(...args);
  }

  override get(...args: Parameters<RateLimiterMemory['get']>) {
    this.onFallback();
    return super.get(...args);
  }
}

/**
 * A fixed-window limiter kept in Redis (a server, a Sentinel master or a Cluster), so it holds across processes.
 * If Redis is unreachable a per-process memory limiter stands in rather than failing every request, and says so.
 */
export function createLimiter(
  redis: RedisClient,
  { keyPrefix, points, durationSeconds, onFallback }: { keyPrefix: string; points: number; durationSeconds: number; onFallback: () => void },
): Limiter {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: durationSeconds,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new StandInLimiter({ keyPrefix: `${keyPrefix}:memory`, points, duration: durationSeconds }, onFallback),
  });
}

/**
 * What a limit counts: the parts that identify it (a public key and an address, say). Redis sees only
 * their digest, never a header value: a secret pasted into the wrong header does not end up in a key.
 */
export type LimitCheck = [Limiter, ...parts: string[]];

const keyOf = (parts: string[]) => sha256(parts.join('\n')).toString('base64url');

/** Seconds until every key is allowed again, or 0 when none of them is over its limit. */
export async function blockedForSeconds(checks: LimitCheck[]): Promise<number> {
  const states = await Promise.all(checks.map(([limiter, ...parts]) => limiter.get(keyOf(parts))));
  let wait = 0;
  states.forEach((state, i) => {
    if (state && state.consumedPoints >= checks[i]![0].points) wait = Math.max(wait, Math.ceil(state.msBeforeNext / 1000));
  });
  return wait;
}

/** Counts one attempt against every key; returns the seconds to wait when any limit is exceeded, else 0. */
export async function consumeAll(checks: LimitCheck[]): Promise<number> {
  const outcomes = await Promise.allSettled(checks.map(([limiter, ...parts]) => limiter.consume(keyOf(parts))));
  let wait = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') {
      if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
      wait = Math.max(wait, Math.ceil(outcome.reason.msBeforeNext / 1000) || 1);
    }
  }
  return wait;
}
