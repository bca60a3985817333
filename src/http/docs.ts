import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { Hono } from 'hono';
import { staticFiles } from './assets.js';
import type { AppEnv } from './context.js';
import { baseUrl } from './urls.js';

/**
 * GET /docs: Swagger UI over /openapi.json, served entirely by this service (it works offline). The
 * installed swagger-ui-dist supplies the assets; the page and its start-up script are ours.
 */
const SWAGGER_UI_FOLDER = getAbsoluteFSPath();
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png'];
/** In the asset URLs, so that a year of caching ends with the next swagger-ui-dist release. */
const VERSION = (JSON.parse(readFileSync(join(SWAGGER_UI_FOLDER, 'package.json'), 'utf8')) as { version: string }).version;

// Relative URLs: the page is /docs, so they resolve under it even behind a proxy that adds a path prefix.
const asset = (file: string) => `docs/assets/${file}?v=${VERSION}`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Top-up and gift-card store API</title>
  <link rel="stylesheet" href="${asset('swagger-ui.css')}">
  <link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}" sizes="32x32">
  <link rel="icon" type="image/png" href="${asset('favicon-16x16.png')}" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${asset('swagger-ui-bundle.js')}"></script>
  <script src="${asset('swagger-ui-standalone-preset.js')}"></script>
  <script src="docs/init.js?v=${VERSION}"></script>
</body>
</html>
`;

/**
 * Swagger UI's start-up. The token a person pastes under "Authorize" (from POST /api/generate/authorization-token)
 * is kept across reloads; no document validator is called, since that would leave this server.
 */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    displayRequestDuration: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
});
`;

/**
 * Scripts only from this server (no inline script); Swagger UI sets inline styles and draws icons from data
 * URLs; "Try it out" calls the server the document names.
 */
const pagePolicy = (apiOrigin: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src 'self' ${apiOrigin}`,
    "frame-ancestors 'none'",
  ].join('; ');

/** The reference's routes, mounted at /docs. */
export function docsRoutes() {
  const docs = new Hono<AppEnv>();
  docs.get('/', (c) => {
    c.header('Content-Security-Policy', pagePolicy(new URL(baseUrl(c)).origin));
    return c.html(PAGE);
  });
  docs.get('/init.js', (c) => c.body(INIT_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  const files = staticFiles('/docs/assets', SWAGGER_UI_FOLDER, 'public, max-age=31536000, immutable');
  for (const file of SWAGGER_UI_FILES) docs.get(`/assets/${file}`, files);
  return docs;
}
