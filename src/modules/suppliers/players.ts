import type { DbOrTx } from '../../db/client.js';
import type { OrderFieldValue } from '../../db/schema.js';
import { sha256 } from '../../lib/crypto.js';
import type { RedisClient } from '../../lib/redis.js';
import type { PlayerAnswer } from './adapters/types.js';
import { connectionOf, isAvailable, routesOf } from './connections.js';
import { renderDestination } from './destination.js';

/** What a player check found (C27): the provider's answer, or, when none could be had, the form's `valid: true`. */
export type PlayerCheck = PlayerAnswer & { checked_by: 'provider' | 'form' };

export type PlayerLookupDeps = { db: DbOrTx; codeKey: Buffer; redis: RedisClient; cachePrefix: string };

/** How long a provider's answer is kept for the same service and fields (C27). */
export const PLAYER_CHECK_TTL_SECONDS = 600;

/** The answer of a check no provider gave: the order form's. */
export const FORM_ONLY: PlayerCheck = { valid: true, checked_by: 'form' };

/**
 * Asks the provider of the service's first available route whether the fields name a player (C27). Its answers are
 * kept 10 minutes per (service, fields) in Redis, so a shop's check and the order right after it ask once. A provider
 * whose protocol cannot look players up, or that gives no readable answer within its timeout, leaves the check to the
 * form: `{valid: true, checked_by: "form"}`, not kept, so the next check asks again.
 */
export async function lookUpPlayer(deps: PlayerLookupDeps, topUpServiceId: number, fields: OrderFieldValue[]): Promise<PlayerCheck> {
  const key = `${deps.cachePrefix}:player-check:${sha256(JSON.stringify([topUpServiceId, fields.map((f) => [f.name, f.value])])).toString('base64url')}`;
  const kept = await deps.redis.get(key).catch(() => null);
  if (kept) return { ...(JSON.parse(kept) as PlayerAnswer), checked_by: 'provider' };

  const route = (await routesOf(deps.db, topUpServiceId)).find(isAvailable);
  if (!route) return FORM_ONLY;
  const adapter = connectionOf(route, deps.codeKey);
  const destination = route.destination === null ? { value: null } : renderDestination(route.destination, fields);
  if (!adapter.checkPlayer || 'missing' in destination) return FORM_ONLY;
  const answer = await adapter.checkPlayer({ productCode: route.product_code, fields, destination: destination.value }, AbortSignal.timeout(route.timeout_ms));
  if (!answer) return FORM_ONLY;
  await deps.redis.set(key, JSON.stringify(answer), 'EX', PLAYER_CHECK_TTL_SECONDS).catch(() => undefined);
  return { ...answer, checked_by: 'provider' };
}
