import { createHash } from 'node:crypto';
import type { Context, TypedResponse } from 'hono';
import type { JSONValue } from 'hono/utils/types';
import type { AppEnv } from './context.js';
import { baseUrl } from './urls.js';

const utf8 = new TextEncoder();
/** The answer as the bytes sent: encoding 30 KB of text again for every request was a cost of its own. */
type Serialized = { body: Uint8Array<ArrayBuffer>; etag: string };

/**
 * A success answer that is the same for every caller, serialized once and then served as the same bytes until
 * the catalog cache drops it (at most 2 s, or at once on a catalog change in any process): presenting and
 * stringifying a catalog page was most of a cached read's CPU. Keyed by this server's base URL and the request's
 * path and query (the page links name both), and by `variant`: the few facts about the caller an answer shows
 * (its currency, say), so callers who share them share the bytes. Carries an ETag; a matching If-None-Match gets
 * 304 and no body. A build that throws (a 404, say) is not kept.
 */
export async function cachedJson<T extends JSONValue>(c: Context<AppEnv>, build: () => Promise<T>, variant = ''): Promise<TypedResponse<T, 200, 'json'>> {
  const url = new URL(c.req.url);
  const { body, etag } = await c.get('services').catalogCache.get<Serialized>(`json:${variant}:${baseUrl(c)}${url.pathname}${url.search}`, async () => {
    const body = utf8.encode(JSON.stringify(await build()));
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  });
  c.header('ETag', etag);
  // The body is the JSON of a T built above: typed as the route's JSON answer (a 304 carries none).
  if (c.req.header('if-none-match') === etag) return c.body(null, 304) as unknown as TypedResponse<T, 200, 'json'>;
  c.header('Content-Type', 'application/json');
  return c.body(body, 200) as unknown as TypedResponse<T, 200, 'json'>;
}
