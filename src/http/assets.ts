import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';
import { ASSETS_PATH } from './urls.js';

/**
 * The files the stored image paths name (the demo catalog's pictures and media): `assets/` in the
 * repository, copied to `dist/assets/` by the build.
 */
const ASSETS_FOLDER = fileURLToPath(new URL('../../assets', import.meta.url));

/** How long clients may keep the demo files: a day, since a new demo seed may redraw them. */
const ASSET_MAX_AGE_SECONDS = 86_400;

/**
 * The files of `folder` under the URL prefix `mount` (GET and HEAD), kept by clients for `cacheControl`
 * instead of the default `no-store`. A missing file falls through to the 404 of unknown routes.
 */
export function staticFiles(mount: string, folder: string, cacheControl: string): MiddlewareHandler<AppEnv> {
  const files = serveStatic<AppEnv>({ root: folder, rewriteRequestPath: (path) => path.slice(mount.length) });
  return async (c, next) => {
    const response = await files(c, next);
    // Only a file found: otherwise the answer is the one `next` gave (a 404).
    if (response instanceof Response) response.headers.set('Cache-Control', cacheControl);
    return response;
  };
}

/** GET /assets/*: what `assetUrls` points at when ASSET_BASE_URL is not set. */
export const assetFiles = staticFiles(ASSETS_PATH, ASSETS_FOLDER, `public, max-age=${ASSET_MAX_AGE_SECONDS}`);
