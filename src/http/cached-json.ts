import { createHash } from 'node:crypto';
import type { Context, TypedResponse } from 'hono';
import type { JSONValue } from 'hono/utils/types';
import type { AppEnv } from './context.js';
import { routePattern } from './request-log.js';
import { baseUrl } from './urls.js';

const utf8 = new TextEncoder();

/**
 * A cached answer as sent: its bytes (encoding 30 KB of text again for every request was a cost of its own) and
 * ETag. `laneRoute`: the route pattern, when the cached-read lane may serve these bytes to any signed-in caller.
 */
export type CachedAnswer = { body: Uint8Array<ArrayBuffer>; etag: string; laneRoute: string | null };

/** Where an answer is kept: its variant, the base URL its links name, and the request's path and query. */
export const cachedAnswerKey = (variant: string, base: string, pathAndQuery: string) => `json:${variant}:${base}${pathAndQuery}`;

/**
 * A success answer that is the same for every caller, serialized once and then served as the same bytes until
 * the catalog cache drops it (at most 2 s, or at once on a catalog change in any process): presenting and
 * stringifying a catalog page was most of a cached read's CPU. Keyed by this server's base URL and the request's
 * path and query (the page links name both), and by `variant`: the few facts about the caller an answer shows
 * (its currency, say), so callers who share them share the bytes. Carries an ETag; a matching If-None-Match gets
 * 304 and no body. A build that throws (a 404, say) is not kept.
 *
 * An answer without a variant to a signed-in caller (requireToken ran) is one every signed-in caller may have:
 * the cached-read lane (cached-lane.ts) sends the same bytes again for the same path and query, whose validation
 * therefore passed here.
 */
export async function cachedJson<T extends JSONValue>(c: Context<AppEnv>, build: () => Promise<T>, variant = ''): Promise<TypedResponse<T, 200, 'json'>> {
  const url = new URL(c.req.url);
  const key = cachedAnswerKey(variant, baseUrl(c), `${url.pathname}${url.search}`);
  const { body, etag } = await c.get('services').catalogCache.get<CachedAnswer>(key, async () => {
    const body = utf8.encode(JSON.stringify(await build()));
    const laneRoute = variant === '' && c.get('account') ? routePattern(c) : null;
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"`, laneRoute };
  });
  c.header('ETag', etag);
  // The body is the JSON of a T built above: typed as the route's JSON answer (a 304 carries none).
  if (c.req.header('if-none-match') === etag) return c.body(null, 304) as unknown as TypedResponse<T, 200, 'json'>;
  c.header('Content-Type', 'application/json');
  return c.body(body, 200) as unknown as TypedResponse<T, 200, 'json'>;
}
