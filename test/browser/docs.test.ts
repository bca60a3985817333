import { existsSync } from 'node:fs';
import type { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { DEMO_CARDS, DEMO_TOP_UPS } from '../../src/demo/catalog.js';
import { DEMO_ITEMS } from '../../src/demo/license.js';
import { expectJson, type Json } from '../helpers/api.js';
import { routeDefinitions } from '../helpers/contract.js';
import { BROWSER_TIMEOUT, demoStoreAndBrowser, offlineContext, pageProblems, screenshot } from './chromium.js';

const store = demoStoreAndBrowser();

/** The operation block of `method path` on the reference page. */
const operation = (page: import('playwright-core').Page, method: string, path: string) =>
  page.locator(`.opblock-${method}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

/**
 * The example a reader of the reference sees for a schema, composed as Swagger UI does: a schema's own
 * example wins, references are followed, objects and arrays are built from their parts, and a value with
 * no example at all shows as a placeholder of its type.
 */
function shownExample(doc: Json, schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.$ref) return shownExample(doc, doc.components.schemas[schema.$ref.split('/').pop()]);
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf ?? schema.oneOf) return shownExample(doc, (schema.anyOf ?? schema.oneOf)[0]);
  const type = [schema.type].flat().find((t) => t !== 'null');
  if (type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, shownExample(doc, property as Json)]));
  }
  if (type === 'array') return [shownExample(doc, schema.items)];
  return { string: 'string', integer: 0, number: 0, boolean: true }[type as string];
}

/** The main operations of both interfaces: each has examples a reader can use as they are. */
const MAIN_OPERATIONS = [
  ['post', '/api/generate/authorization-token'],
  ['get', '/api/top-up/list'],
  ['get', '/api/top-up/details'],
  ['get', '/api/card/details'],
  ['get', '/api/card/services'],
  ['post', '/api/top-up/make-order'],
  ['post', '/api/card/make-order'],
  ['get', '/api/get-topup/orders'],
  ['get', '/api/get-card/orders'],
  ['get', '/license-api/account/details'],
  ['get', '/license-api/items/all'],
  ['get', '/license-api/items/item'],
  ['post', '/license-api/purchases/validation'],
] as const;

describe('examples in /openapi.json', () => {
  it('show each main operation with a request and an answer the contract accepts, taken from the demo data', async () => {
    const doc = await expectJson(await store.app.request('/openapi.json'), 200);
    const routes = routeDefinitions(createApp(store.app.services)) as unknown as Array<{ method: string; path: string; request?: Json; responses: Json }>;
    const shown: unknown[] = [];
    for (const [method, path] of MAIN_OPERATIONS) {
      const operation = doc.paths[path][method];
      const route = routes.find((r) => r.method === method && r.path === path)!;
      const answer = shownExample(doc, operation.responses['200'].content['application/json'].schema);
      const schema = route.responses['200'].content['application/json'].schema as z.ZodType;
      expect(schema.safeParse(answer).error?.issues, `${method} ${path}`).toBeUndefined();
      // Every value has an example of its own (no placeholder), but true/false flags.
      expect(JSON.stringify(answer), `${method} ${path}`).not.toContain('"string"');
      shown.push(answer);
      if (operation.requestBody) {
        const body = shownExample(doc, operation.requestBody.content['application/json'].schema);
        expect(route.request!.body.content['application/json'].schema.safeParse(body).error?.issues, `${method} ${path}`).toBeUndefined();
        shown.push(body);
      }
      for (const parameter of operation.parameters ?? []) if (parameter.required) expect(parameter.schema.example, `${path} ${parameter.name}`).toBeDefined();
    }
    const text = JSON.stringify(shown);
    for (const name of [DEMO_TOP_UPS[0]!.name, DEMO_TOP_UPS[0]!.services[0]!.name, DEMO_CARDS[0]!.name, DEMO_CARDS[0]!.services[0]!.name, DEMO_ITEMS[0]!.name]) {
      expect(text).toContain(JSON.stringify(name));
    }
    // The example pictures are the demo's own: each names a file the service serves.
    const pictures = [...text.matchAll(/https:\/\/store\.example\.com\/assets\/([^"]+)/g)].map((m) => m[1]!);
    expect(pictures.length).toBeGreaterThan(10);
    expect(pictures.filter((path) => !existsSync(new URL(`../../assets/${path}`, import.meta.url)))).toEqual([]);
  });
});

describe('/docs served by the service itself', BROWSER_TIMEOUT, () => {
  it('is a page of ours that loads Swagger UI from this server only, with no inline script', async () => {
    const response = await store.app.request('/docs');
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual([expect.stringMatching(/^docs\/assets\/swagger-ui-bundle\.js\?v=/), expect.stringMatching(/^docs\/assets\/swagger-ui-standalone-preset\.js\?v=/), expect.stringMatching(/^docs\/init\.js/)]);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('serves the Swagger UI files from the installed package, cached for long; nothing else of the package', async () => {
    for (const [file, type] of [
      ['swagger-ui.css', 'text/css'],
      ['swagger-ui-bundle.js', 'text/javascript'],
      ['swagger-ui-standalone-preset.js', 'text/javascript'],
      ['favicon-32x32.png', 'image/png'],
      ['favicon-16x16.png', 'image/png'],
    ]) {
      const response = await store.app.request(`/docs/assets/${file}?v=1`);
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toContain(type);
      expect(response.headers.get('cache-control'), file).toBe('public, max-age=31536000, immutable');
      expect((await response.arrayBuffer()).byteLength, file).toBeGreaterThan(100);
    }
    for (const file of ['package.json', 'index.html', 'swagger-initializer.js', '../package.json']) {
      const response = await store.app.request(`/docs/assets/${file}`);
      expect(response.status, file).toBe(404);
      expect(response.headers.get('cache-control'), file).toBe('no-store');
    }
  });

  it('renders the operations of both interfaces with the network cut off', async () => {
    const { context, blocked } = await offlineContext(store.browser, store.app.baseUrl);
    const page = await context.newPage();
    const problems = pageProblems(page);
    await page.goto(`${store.app.baseUrl}/docs`);
    for (const [method, path] of [
      ['post', '/api/generate/authorization-token'],
      ['get', '/api/top-up/list'],
      ['post', '/api/card/make-order'],
      ['get', '/license-api/account/details'],
      ['post', '/license-api/purchases/validation'],
    ]) {
      // Strict: exactly one block per operation, visible.
      await operation(page, method!, path!).waitFor({ timeout: 15_000 });
    }
    await expect(page.locator('.info .title').textContent()).resolves.toContain('Top-up and gift-card store API');
    await screenshot(page, 'docs', { readme: true });
    // An operation opened shows its example answer, from the demo catalog.
    const list = operation(page, 'get', '/api/top-up/list');
    await list.locator('.opblock-summary').click();
    await expect(list.locator('.responses-table .example').first().innerText()).resolves.toContain(`"name": "${DEMO_TOP_UPS[0]!.name}"`);
    await screenshot(list.locator('.responses-table').first(), 'docs-example');
    expect(blocked).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('gets a token from the key pair, keeps it after a reload, and calls Interface A with it', async () => {
    const { context, blocked } = await offlineContext(store.browser, store.app.baseUrl);
    const page = await context.newPage();
    const problems = pageProblems(page);
    await page.goto(`${store.app.baseUrl}/docs`);

    // The token exchange: its PublicKey and SecretKey headers are inputs of the form.
    const exchange = operation(page, 'post', '/api/generate/authorization-token');
    await exchange.locator('.opblock-summary').click();
    await exchange.getByRole('button', { name: 'Try it out' }).click();
    await exchange.locator('tr[data-param-name="PublicKey"] input').fill(store.demo.publicKey);
    await exchange.locator('tr[data-param-name="SecretKey"] input').fill(store.demo.secretKey);
    await exchange.getByRole('button', { name: 'Execute' }).click();
    const answer = exchange.locator('.live-responses-table .response-col_description pre').first(); // the body; then the headers, the duration
    await answer.waitFor();
    const token = (JSON.parse(await answer.innerText()) as { bearer_token: string }).bearer_token;
    expect(token).toMatch(/\S{20,}/);
    await screenshot(exchange, 'docs-token');

    // Pasted under Authorize (bearerToken) and kept across a reload.
    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.dialog-ux');
    const scheme = dialog.locator('.auth-container').filter({ hasText: 'bearerToken' });
    await scheme.locator('input').fill(token);
    await scheme.getByRole('button', { name: 'Apply credentials' }).click();
    await scheme.locator('button', { hasText: 'Logout' }).waitFor();
    await dialog.locator('.close-modal').click();
    await page.reload();

    const list = operation(page, 'get', '/api/top-up/list');
    await list.locator('.opblock-summary').click();
    await page.locator('.auth-wrapper .authorize.locked').waitFor();
    await list.getByRole('button', { name: 'authorization button locked' }).waitFor();
    await list.getByRole('button', { name: 'Try it out' }).click();
    await list.getByRole('button', { name: 'Execute' }).click();
    const listed = list.locator('.live-responses-table .response-col_description pre').first(); // the body; then the headers, the duration
    await listed.waitFor();
    const body = JSON.parse(await listed.innerText()) as { status: string; message: { items: Array<{ slug: string }> } };
    expect(body.status).toBe('success');
    expect(body.message.items.map((item) => item.slug)).toContain('pubg-mobile');
    await expect(list.locator('.live-responses-table tr.response .response-col_status').innerText()).resolves.toBe('200');
    await screenshot(list.locator('.live-responses-table'), 'docs-top-up-list');
    expect(blocked).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
