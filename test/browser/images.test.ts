import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from '../../src/core/env.js';
import { seedDemoData, type DemoCredentials } from '../../src/seed/index.js';
import { client, expectFailure, expectJson, tokenFor, type Json } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { BROWSER_TIMEOUT, demoStoreAndBrowser, offlineContext, pageProblems, screenshot } from './chromium.js';

const store = demoStoreAndBrowser();

/** Every stored file path the demo data wrote: product, service, gateway, item and profile pictures and media. */
async function storedPaths(target: TestApp): Promise<string[]> {
  const rows = await target.services.sql<{ path: string }[]>`
    select path from (
      select image->>'image' as path from top_ups union select image->>'preview' from top_ups
      union select image->>'image' from cards union select image->>'preview' from cards
      union select image from top_up_services union select image from card_services union select image from gateways
      union select thumbnail from license_items union select preview_image from license_items
      union select preview_video from license_items union select preview_audio from license_items
      union select jsonb_array_elements_text(screenshots) from license_items
      union select avatar from accounts union select cover from accounts union select image from accounts
    ) stored where path <> '' order by path`;
  return rows.map((r) => r.path);
}

/** The catalog as a client reads it, both interfaces: every answer that carries file URLs. */
async function catalogAnswers(target: TestApp, credentials: DemoCredentials): Promise<Json[]> {
  const api = client(target, await tokenFor(target, credentials));
  const get = async (path: string) => expectJson(await api.get(path), 200);
  const topUps = (await get('/api/top-up/list?per_page=100')).message.items as Json[];
  const cards = (await get('/api/get-card')).message.cards as Json[];
  const answers = [
    { topUps },
    ...(await Promise.all(topUps.map((t) => get(`/api/top-up/details?slug=${t.slug}`)))),
    { cards },
    ...(await Promise.all(cards.map((c) => get(`/api/card/details?card_id=${c.id}`)))),
    ...(await Promise.all(cards.map((c) => get(`/api/card/review?card_id=${c.id}`)))),
    await get('/api/get-campaign'),
  ];
  const licensed = (path: string) => target.request(path, { headers: { 'X-API-Key': credentials.apiKey } }).then((r) => expectJson(r, 200));
  answers.push(await licensed('/license-api/account/details'), await licensed('/license-api/items/all'));
  return answers;
}

/** The file URLs in `answers` under `base`, each with the field that holds it. */
function fileUrls(answers: Json[], base: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (value: unknown, key: string) => {
    if (typeof value === 'string' && value.startsWith(base)) found.set(value, key);
    else if (Array.isArray(value)) for (const item of value) walk(item, key);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  walk(answers, '');
  return found;
}

/** The kind of file a field holds: previews of audio and video items are media, every other file a picture. */
const expectedType = (field: string) => (field === 'preview_audio' ? 'audio/' : field === 'preview_video' ? 'video/' : 'image/');

describe('demo pictures served at /assets/', BROWSER_TIMEOUT, () => {
  it('has a file for every path the demo data stores', async () => {
    const paths = await storedPaths(store.app);
    expect(paths.length).toBeGreaterThanOrEqual(55);
    const missing = paths.filter((path) => !existsSync(new URL(`../../assets/${path}`, import.meta.url)));
    expect(missing).toEqual([]);
  });

  it('answers every file URL of the catalog (both interfaces) with the file, of its content type, cacheable', async () => {
    const urls = fileUrls(await catalogAnswers(store.app, store.demo), `${store.app.baseUrl}/assets/`);
    const fields = new Set(urls.values());
    for (const field of ['image_path', 'preview_image', 'product_image', 'image', 'imgPath', 'thumbnail', 'screenshots', 'avatar', 'cover', 'preview_audio', 'preview_video']) {
      expect(fields, field).toContain(field);
    }
    for (const [url, field] of urls) {
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('content-type'), url).toMatch(new RegExp(`^${expectedType(field)}`));
      expect(response.headers.get('cache-control'), url).toBe('public, max-age=86400');
      expect((await response.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
  });

  it('draws every catalog picture in a browser', async () => {
    const urls = [...fileUrls(await catalogAnswers(store.app, store.demo), `${store.app.baseUrl}/assets/`)].filter(([, field]) => expectedType(field) === 'image/').map(([url]) => url);
    const { context, blocked } = await offlineContext(store.browser, store.app.baseUrl);
    const page = await context.newPage();
    const problems = pageProblems(page);
    // One picture opened on its own, as a person following a URL of the catalog would.
    await page.goto(urls.find((url) => url.endsWith('/cards/steam-wallet-us.webp'))!);
    await expect(page.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).resolves.toBeGreaterThan(0);
    await screenshot(page, 'image-steam-wallet');
    // All of them on one sheet, a page of the server's own origin (the browser keeps other pages off loopback addresses).
    await page.goto(`${store.app.baseUrl}/health`);
    const figures = urls.map((url) => `<figure><img src="${url}"><figcaption>${url.slice(url.indexOf('/assets/') + 8)}</figcaption></figure>`);
    await page.setContent(
      `<style>body{display:flex;flex-wrap:wrap;gap:8px;font:10px sans-serif}figure{margin:0;width:150px}img{width:150px;height:100px;object-fit:contain;background:#eee}</style>${figures.join('')}`,
      { waitUntil: 'load' },
    );
    const drawn = await page.locator('img').evaluateAll((images: HTMLImageElement[]) => images.map((img) => [img.src, img.naturalWidth] as const));
    expect(drawn).toHaveLength(urls.length);
    expect(drawn.filter(([, width]) => width === 0)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    await screenshot(page, 'images');
    expect(blocked).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('answers a file that is not there, or a path out of the folder, with the 404 of unknown routes', async () => {
    expect(await expectFailure(await store.app.request('/assets/cards/no-such-card.webp'), 404)).toBe('The requested endpoint does not exist.');
    expect((await store.app.request('/assets/cards/no-such-card.webp')).headers.get('cache-control')).toBe('no-store');
    // Sent as written (fetch would resolve the dots): the service must not step out of assets/.
    for (const path of ['/assets/../package.json', '/assets/%2e%2e/package.json', '/assets/..%2fpackage.json', '/assets/cards/../../src/core/env.ts']) {
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${store.app.baseUrl}${path}`, (response) => {
          response.resume();
          resolve(response.statusCode!);
        });
        request.on('error', reject);
        request.end();
      });
      expect(status, path).toBe(404);
    }
    const posted = await store.app.request('/assets/cards/steam-wallet-us.webp', { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('ASSET_BASE_URL', () => {
  it('puts every file URL of both interfaces under the configured base instead', async () => {
    const elsewhere = await startTestApp({ env: { ASSET_BASE_URL: 'https://cdn.example.com/store/' } });
    try {
      const credentials = await seedDemoData(elsewhere.services.db, elsewhere.services.config);
      const answers = await catalogAnswers(elsewhere, credentials);
      expect(fileUrls(answers, `${elsewhere.baseUrl}/assets/`).size).toBe(0);
      const urls = [...fileUrls(answers, 'https://cdn.example.com/store/').keys()];
      expect(urls).toContain('https://cdn.example.com/store/cards/steam-wallet-us.webp');
      expect(urls).toContain('https://cdn.example.com/store/license/aurora/thumbnail.jpg');
      expect(urls.filter((url) => url.includes('//', 8))).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('must be an http or https URL, named when it is not', () => {
    expect(parseEnv({ ASSET_BASE_URL: 'https://cdn.example.com' }).ASSET_BASE_URL).toBe('https://cdn.example.com');
    for (const value of ['ftp://cdn.example.com', 'cdn.example.com', '/assets']) {
      expect(() => parseEnv({ ASSET_BASE_URL: value }), value).toThrow(ConfigError);
      expect(() => parseEnv({ ASSET_BASE_URL: value }), value).toThrow(/^ASSET_BASE_URL: /);
    }
  });
});
