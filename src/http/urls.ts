import type { Context } from 'hono';
import type { AppEnv } from './context.js';

/** Absolute base URL of this server as the client reached it (or PUBLIC_BASE_URL), without a trailing slash. */
export function baseUrl(c: Context<AppEnv>): string {
  const { config } = c.var.services;
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const url = new URL(c.req.url);
  if (config.TRUST_PROXY) {
    const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim();
    const host = c.req.header('x-forwarded-host')?.split(',')[0]?.trim();
    if (proto) url.protocol = `${proto}:`;
    if (host) url.host = host;
  }
  return url.origin;
}

/** Public URL of a stored file path (images, previews); absolute URLs pass through. */
export function assetUrl(c: Context<AppEnv>, path: string | null | undefined): string {
  if (!path) return '';
  if (/^https?:\/\//.test(path)) return path;
  return `${baseUrl(c)}/assets/${path.replace(/^\/+/, '')}`;
}
