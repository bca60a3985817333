import { createHash } from 'node:crypto';
import type { Context, TypedResponse } from 'hono';
import type { JSONValue } from 'hono/utils/types';
import type { Caller } from '../core/caller.js';
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

/** How the cached-read lane answers a path whose answers are kept: the route's pattern and the caller's variant. */
export type LaneRoute = { route: string; variantOf: VariantOf };

/** Where an answer is kept: its variant, the base URL its links name, and the request's path and query. */
export const cachedAnswerKey = (variant: string, base: string, pathAndQuery: string) => `json:${variant}:${base}${pathAndQuery}`;

/** Where the lane finds how to answer a path and query. */
export const laneRouteKey = (base: string, pathAndQuery: string) => `lane:${base}${pathAndQuery}`;

const sameForEveryone: VariantOf<Record<string, never>> = () => ({});

/**
 * A success answer serialized once and then served as the same bytes until the catalog cache drops it (at most 2 s,
 * or at once on a catalog change in any process): presenting and stringifying a catalog page was most of a cached
 * read's CPU. Keyed by this server's base URL and the request's path and query (the page links name both), and by the
 * caller's variant (`variantOf`, handed to `build`), so callers who share it share the bytes. Carries an ETag; a matching If-None-Match
 * gets 304 and no body. A build that throws (a 404, say) is not kept.
 *
 * For a signed-in caller (requireToken ran) it also keeps, under the same lifetime, how to answer this path and query
 * again: the cached-read lane (cached-lane.ts) then sends the kept bytes of the caller's variant for it, the path and
 * query having passed validation here.
 */
export async function cachedJson<T extends JSONValue, V extends Variant = Record<string, never>>(
  c: Context<AppEnv>,
  build: (variant: V) => Promise<T>,
  variantOf: VariantOf<V> = sameForEveryone as VariantOf<V>,
): Promise<TypedResponse<T, 200, 'json'>> {
  const url = new URL(c.req.url);
  const base = baseUrl(c);
  const pathAndQuery = `${url.pathname}${url.search}`;
  const { catalogCache } = c.get('services');
  const caller = c.get('account');
  // Only signed-in callers have variants (every route with one is behind requireToken).
  const variant = caller ? await variantOf(caller) : ({} as V);
  const answer = async (): Promise<CachedAnswer> => {
    const body = utf8.encode(JSON.stringify(await build(variant)));
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  };
  // A query with parameters the route does not take (or one twice) is answered but not kept: otherwise anyone could
  // fill the cache with entries nobody asks for again, pushing out the ones everybody asks for.
  const taken = (c.req.valid as (target: 'query') => Record<string, unknown> | undefined)('query') ?? {};
  const names = [...url.searchParams.keys()];
  const keep = names.every((name, i) => Object.hasOwn(taken, name) && names.indexOf(name) === i);
  const { body, etag } = keep ? await catalogCache.get<CachedAnswer>(cachedAnswerKey(variantKey(variant), base, pathAndQuery), answer) : await answer();
  if (caller && keep) void catalogCache.get<LaneRoute>(laneRouteKey(base, pathAndQuery), async () => ({ route: routePattern(c), variantOf: variantOf as VariantOf }));
  c.header('ETag', etag);
  // The body is the JSON of a T built above: typed as the route's JSON answer (a 304 carries none).
  if (c.req.header('if-none-match') === etag) return c.body(null, 304) as unknown as TypedResponse<T, 200, 'json'>;
  c.header('Content-Type', 'application/json');
  return c.body(body, 200) as unknown as TypedResponse<T, 200, 'json'>;
}
