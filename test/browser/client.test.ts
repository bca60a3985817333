/**
 * The TypeScript client in a browser, as a shop's checkout page would use it: the package's `tsc` build loaded by
 * Chromium as ES modules (an import map names openapi-fetch; no bundler), calling the demo store on the page's own
 * origin, reading a failure as a StoreError, and verifying a signed event with Web Crypto.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';
import { BROWSER_TIMEOUT, demoStoreAndBrowser, pageProblems, screenshot } from './chromium.js';

const store = demoStoreAndBrowser();
const CLIENT = join(ROOT, 'clients/typescript');
// A page on localhost is a secure context, where browsers give pages Web Crypto (verifyWebhook needs it).
const SHOP = 'http://localhost:4173';

let build = '';
beforeAll(async () => {
  build = await mkdtemp(join(CLIENT, '.build-'));
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--outDir', build], { cwd: CLIENT });
});
afterAll(() => rm(build, { recursive: true, force: true }));

const CHECKOUT = `<!doctype html>
<html><head><meta charset="utf-8"><title>Checkout</title>
<script type="importmap">{"imports": {"@topup-store/client": "/client/index.js", "openapi-fetch": "/vendor/openapi-fetch.mjs"}}</script>
<style>body { font: 16px sans-serif; margin: 2rem; } li { margin: .4rem 0; }</style></head>
<body><h1>Checkout</h1><ul id="log"></ul>
<script type="module">
import { createStoreClient, verifyWebhook } from '@topup-store/client';
const log = (text) => document.getElementById('log').append(Object.assign(document.createElement('li'), { textContent: text }));
const given = JSON.parse(decodeURIComponent(location.hash.slice(1)));
try {
  const store = createStoreClient({ baseUrl: location.origin, publicKey: given.publicKey, secretKey: given.secretKey });
  const { data: services } = await store.GET('/api/card/services', { params: { query: { card_id: 1 } } });
  const service = services.message.services[0];
  const { data: order } = await store.POST('/api/card/make-order', { body: { service_ids: [service.id], quantities: [1] } });
  log('Ordered ' + service.name + ': ' + order.message.utr);
  try {
    await store.POST('/api/card/make-order', { body: { service_ids: [service.id], quantities: [1], max_price: '0.01' } });
  } catch (error) {
    log('Refused: ' + error.kind + ' (' + error.status + ') ' + error.messages[0]);
  }
  const event = await verifyWebhook(given.secret, given.headers, given.body);
  log('Webhook verified: ' + event.type + ' of ' + event.data.utr);
  window.done = 'ok';
} catch (error) {
  log('Failed: ' + error);
  window.done = String(error);
}
</script></body></html>`;

describe('the TypeScript client in a browser', () => {
  it('places an order, reads a refusal and verifies an event from a page, with no bundler', BROWSER_TIMEOUT, async () => {
    const context = await store.browser.newContext({ viewport: { width: 900, height: 400 } });
    // The page's origin serves the page, the build and openapi-fetch, and passes the store's paths on to the store.
    await context.route(`${SHOP}/**`, async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname.startsWith('/api/') || url.pathname.startsWith('/license-api/')) {
        return route.fulfill({ response: await route.fetch({ url: `${store.app.baseUrl}${url.pathname}${url.search}` }) });
      }
      const files: Record<string, string> = { '/vendor/openapi-fetch.mjs': join(ROOT, 'node_modules/openapi-fetch/dist/index.mjs') };
      const file = url.pathname.startsWith('/client/') ? join(build, url.pathname.slice('/client/'.length)) : files[url.pathname];
      if (url.pathname === '/') return route.fulfill({ contentType: 'text/html', body: CHECKOUT });
      if (!file) return route.fulfill({ status: 404 });
      return route.fulfill({ contentType: 'text/javascript', body: await readFile(file, 'utf8') });
    });
    const page = await context.newPage();
    const problems = pageProblems(page);

    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const body = JSON.stringify({ type: 'order.completed', timestamp: '2026-11-28T10:00:00.000000Z', data: { utr: 'C0MX0EXAMPLE', status: 1 } });
    const at = new Date();
    const headers = {
      'webhook-id': 'msg_7',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_7', at, body),
    };
    const given = { publicKey: store.demo.publicKey, secretKey: store.demo.secretKey, secret, headers, body };
    await page.goto(`${SHOP}/#${encodeURIComponent(JSON.stringify(given))}`);
    await page.waitForFunction(() => (window as { done?: string }).done !== undefined);
    const lines = await page.locator('#log li').allTextContents();
    await screenshot(page, 'client-in-browser');

    expect(await page.evaluate(() => (window as { done?: string }).done)).toBe('ok');
    expect(lines).toEqual([
      expect.stringMatching(/^Ordered Steam \$10: C[0-9A-Z]+$/),
      expect.stringMatching(/^Refused: above_max_price \(409\) The order costs 10\.00 USD, above max_price 0\.01\.$/),
      'Webhook verified: order.completed of C0MX0EXAMPLE',
    ]);
    // The refused order's 409 is the one resource the browser reports failing.
    expect(problems.filter((problem) => !/status of 409/.test(problem))).toEqual([]);
    await context.close();
  });
});
