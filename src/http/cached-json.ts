import { createHash } from 'node:crypto';
import type { Context, TypedResponse } from 'hono';
import type { JSONValue } from 'hono/utils/types';
import type { Caller } from '../core/caller.js';
import type { Services } from '../runtime/services.js';
import type { AppEnv } from './context.js';
import { routePattern } from './request-log.js';
import { baseUrl } from './urls.js';

const utf8 = new TextEncoder();

/** A cached answer as sent: its bytes (encoding 30 KB of text again for every request was a cost of its own) and ETag. */
export type CachedAnswer = { body: Uint8Array<ArrayBuffer>; etag: string };

/**
 * Which of a path's answers a caller gets: the few facts about the caller the answer shows (its currency, say), none
 * when every caller gets the same one. Synchronous when it needs nothing but the caller.
 */
export type VariantOf<V extends Variant = Variant> = (caller: Caller) => V | Promise<V>;
type Variant = Record<string, string | boolean>;

/** A variant as part of a cache key. */
export const variantKey = (variant: Variant) => JSON.stringify(Object.values(variant));

/** Where an answer is kept: its variant, the base URL its links name, and the request's path and query. */
export const cachedAnswerKey = (variant: string, base: string, pathAndQuery: string) => `json:${variant}:${base}${pathAndQuery}`;

/** What the cached-read lane sends a caller: the answer's bytes, and its ETag where the full path sends one. */
export type LaneAnswer = { body: Uint8Array | string; etag?: string };

/**
 * How the cached-read lane answers a path and query the full path has validated: the route's pattern (the log line's
 * and the metrics') and the caller's answer, or null where only the full path can give it (an answer not kept).
 */
export type LaneRoute = { route: string; answerFor: (caller: Caller) => LaneAnswer | null | Promise<LaneAnswer | null> };

const laneRouteKey = (base: string, pathAndQuery: string) => `lane:${base}${pathAndQuery}`;

/** How the lane answers `pathAndQuery` asked of the server at `base`, if a route has offered it (offerLane). */
export const laneRouteOf = (services: Pick<Services, 'catalogCache'>, base: string, pathAndQuery: string) =>
  services.catalogCache.peek<LaneRoute>(laneRouteKey(base, pathAndQuery));

/** This request's base URL and its path and query: what its answer's links name, and what the lane finds it by. */
export function requestTarget(c: Context<AppEnv>): { base: string; url: URL; pathAndQuery: string } {
  const url = new URL(c.req.url);
  return { base: baseUrl(c), url, pathAndQuery: `${url.pathname}${url.search}` };
}

/**
 * Whether the request's query holds only parameters the route takes, each once. Only such a query is kept (an answer,
 * a lane route): otherwise anyone could fill the cache with entries nobody asks for again, pushing out the ones
 * everybody asks for.
 */
function keepableQuery(c: Context<AppEnv>, url: URL): boolean {
  const taken = (c.req.valid as (target: 'query') => Record<string, unknown> | undefined)('query') ?? {};
  const names = [...url.searchParams.keys()];
  return names.every((name, i) => Object.hasOwn(taken, name) && names.indexOf(name) === i);
}

/**
 * Lets the cached-read lane (cached-lane.ts) answer this request's path and query for signed-in callers with
 * `answerFor`, from now on and for as long as the catalog cache keeps it (at most 2 s, or until a catalog change): the
 * path and query have passed this route's validation, so the lane may skip it. Only for a signed-in caller (requireToken
 * ran) and a query the route takes whole. `answerFor` is kept: it must hold nothing of this request but what its path
 * and query decide (not the Context, which holds the caller's token).
 */
export function offerLane(c: Context<AppEnv>, answerFor: LaneRoute['answerFor'], { base, url, pathAndQuery } = requestTarget(c)): void {
  if (c.get('account') && keepableQuery(c, url)) offer(c, laneRouteKey(base, pathAndQuery), answerFor);
}

const offer = (c: Context<AppEnv>, key: string, answerFor: LaneRoute['answerFor']) =>
  void c.get('services').catalogCache.get<LaneRoute>(key, async () => ({ route: routePattern(c), answerFor }));

/** The lane's answer of a catalog read kept by cachedJson: the kept bytes of the caller's variant, while they are kept. */
function keptVariant(catalogCache: Services['catalogCache'], base: string, pathAndQuery: string, variantOf: VariantOf): LaneRoute['answerFor'] {
  const kept = (variant: Variant) => catalogCache.peek<CachedAnswer>(cachedAnswerKey(variantKey(variant), base, pathAndQuery)) ?? null;
  return (caller) => {
    const variant = variantOf(caller);
    return variant instanceof Promise ? variant.then(kept) : kept(variant);
  };
}

const sameForEveryone: VariantOf<Record<string, never>> = () => ({});

/**
 * A success answer serialized once and then served as the same bytes until the catalog cache drops it (at most 2 s,
 * or at once on a catalog change in any process): presenting and stringifying a catalog page was most of a cached
 * read's CPU. Keyed by this server's base URL and the request's path and query (the page links name both), and by the
 * caller's variant (`variantOf`, handed to `build`), so callers who share it share the bytes. Carries an ETag; a matching If-None-Match
 * gets 304 and no body. A build that throws (a 404, say) is not kept.
 *
 * For a signed-in caller it also offers the cached-read lane this path and query (offerLane): the lane then sends the
 * kept bytes of each caller's variant, while they are kept.
 */
export async function cachedJson<T extends JSONValue, V extends Variant = Record<string, never>>(
  c: Context<AppEnv>,
  build: (variant: V) => Promise<T>,
  variantOf: VariantOf<V> = sameForEveryone as VariantOf<V>,
): Promise<TypedResponse<T, 200, 'json'>> {
  const { base, url, pathAndQuery } = requestTarget(c);
  const { catalogCache } = c.get('services');
  const caller = c.get('account');
  // Only signed-in callers have variants (every route with one is behind requireToken).
  const variant = caller ? await variantOf(caller) : ({} as V);
  const answer = async (): Promise<CachedAnswer> => {
    const body = utf8.encode(JSON.stringify(await build(variant)));
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  };
  const keep = keepableQuery(c, url);
  const { body, etag } = keep ? await catalogCache.get<CachedAnswer>(cachedAnswerKey(variantKey(variant), base, pathAndQuery), answer) : await answer();
  const laneKey = laneRouteKey(base, pathAndQuery);
  // Offered once while kept (not a closure per request), built outside this scope: it must not hold this request.
  if (caller && keep && !catalogCache.peek(laneKey)) offer(c, laneKey, keptVariant(catalogCache, base, pathAndQuery, variantOf as VariantOf));
  c.header('ETag', etag);
  // The body is the JSON of a T built above: typed as the route's JSON answer (a 304 carries none).
  if (c.req.header('if-none-match') === etag) return c.body(null, 304) as unknown as TypedResponse<T, 200, 'json'>;
  c.header('Content-Type', 'application/json');
  return c.body(body, 200) as unknown as TypedResponse<T, 200, 'json'>;
}
