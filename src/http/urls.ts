import type { Context } from 'hono';
import type { Config } from '../core/env.js';
import { forwarded } from './client-ip.js';
import type { AppEnv } from './context.js';

/** Absolute base URL of this server as the client reached it (or PUBLIC_BASE_URL), without a trailing slash. */
export function baseUrl(c: Context<AppEnv>): string {
  return baseUrlOf(c.get('services').config, c.req.url, (name) => forwarded(c, name));
}

/**
 * baseUrl from the request's own URL (`http://host/path`) and its forwarded headers' last entries: one rule for
 * routes and for the cached-read lane, which answers before any Context exists.
 */
export function baseUrlOf(
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'TRUST_PROXY'>,
  requestUrl: string,
  forwardedHeader: (name: 'x-forwarded-proto' | 'x-forwarded-host') => string | undefined,
): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const url = new URL(requestUrl);
  if (config.TRUST_PROXY) {
    const proto = forwardedHeader('x-forwarded-proto');
    const host = forwardedHeader('x-forwarded-host');
    if (proto) url.protocol = `${proto}:`;
    if (host) url.host = host;
  }
  return url.origin;
}

/** Turns a stored file path (images, previews) into the URL a client fetches; presenters receive one. */
export type AssetUrl = (path: string | null | undefined) => string;

/** Where the service itself serves the asset files (src/http/assets.ts). */
export const ASSETS_PATH = '/assets';

/**
 * The asset URLs of this request: the stored path under ASSET_BASE_URL, or else under this server's own
 * /assets/; absolute URLs pass through, no path is ''.
 */
export function assetUrls(c: Context<AppEnv>): AssetUrl {
  return assetUrlsUnder(c.get('services').config.ASSET_BASE_URL, baseUrl(c));
}

/** Where the asset URLs of this request start: ASSET_BASE_URL, or else this server's own /assets (no trailing slash). */
export function assetBaseOf(c: Context<AppEnv>): string {
  return assetBaseUnder(c.get('services').config.ASSET_BASE_URL, baseUrl(c));
}

/** assetBaseOf for a server at `serverBase` (already found for the request): ASSET_BASE_URL, or its own /assets. */
export const assetBaseUnder = (assetBase: string | undefined, serverBase: string) =>
  assetBase?.replace(/\/+$/, '') ?? `${serverBase.replace(/\/+$/, '')}${ASSETS_PATH}`;

/** The asset URLs for a server at `serverBase` (the CLI uses PUBLIC_BASE_URL or the local server). */
export function assetUrlsUnder(assetBase: string | undefined, serverBase: string): AssetUrl {
  const base = assetBaseUnder(assetBase, serverBase);
  return (path) => {
    if (!path) return '';
    if (/^https?:\/\//.test(path)) return path;
    return `${base}/${path.replace(/^\/+/, '')}`;
  };
}
