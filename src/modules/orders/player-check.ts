import type { Db } from '../../db/client.js';
import { FORM_ONLY, lookUpPlayer, type PlayerCheck, type PlayerLookupDeps } from '../suppliers/players.js';
import { checkTopUpOrder } from './service.js';

export type { PlayerCheck } from '../suppliers/players.js';

/** What a player check reads: the catalog (the order form, the service's routes) and the providers' answers kept in Redis. */
export type PlayerCheckDeps = PlayerLookupDeps & { db: Db };

export type TopUpFields = { topUpId: number; serviceId: number; fields: Record<string, unknown> };

/**
 * C27: would these fields make a top-up order of this service reach a player? The order form's rules first (required,
 * select options, patterns: a 422 naming each field, as make-order answers), then the provider of the service's first
 * available route, where its protocol can look players up. Places nothing, writes nothing but the provider's answer
 * to the cache. A test token's check (C25) never asks a provider: the form's answer is its answer.
 */
export async function checkPlayer(deps: PlayerCheckDeps, input: TopUpFields, livemode: boolean): Promise<PlayerCheck> {
  const { fields } = await checkTopUpOrder(deps.db, input);
  return livemode ? lookUpPlayer(deps, input.serviceId, fields) : FORM_ONLY;
}

