import { describe, expect, it } from 'vitest';
import { client, expectJson, tokenFor } from '../helpers/api.js';
import { sleep } from '../helpers/processes.js';
import { BROWSER_TIMEOUT, demoStoreAndBrowser, offlineContext, pageProblems, screenshot } from './chromium.js';

const store = demoStoreAndBrowser({ workers: true });

/** A demo card order, once its fulfilment job has run: its utr (= job id) and the job's return value. */
async function fulfilledCardOrder() {
  const api = client(store.app, await tokenFor(store.app, store.demo));
  const { services } = (await expectJson(await api.get('/api/card/services?card_id=1'), 200)).message;
  const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [services[0].id], quantities: [1] }), 200);
  const utr = placed.message.utr as string;
  for (let i = 0; i < 100; i++) {
    const job = await store.app.services.queues.fulfilment.getJob(utr);
    if (job && (await job.getState()) === 'completed') return { utr, returnValue: job.returnvalue as unknown };
    await sleep(100);
  }
  throw new Error(`the fulfilment job ${utr} did not complete`);
}

describe('queue dashboard /admin/queues in a browser (C13)', BROWSER_TIMEOUT, () => {
  it('asks for credentials, then shows the order-fulfilment job of a placed order with its return value', async () => {
    // A few orders, so that the queue's list (the README's picture) has some jobs.
    const [{ utr, returnValue }] = [await fulfilledCardOrder(), await fulfilledCardOrder(), await fulfilledCardOrder()];
    expect(returnValue).toMatchObject({ kind: 'card' });

    // Without credentials the browser is asked for them (a headless one has none to give), and shows no page.
    const anonymous = await offlineContext(store.browser, store.app.baseUrl);
    await expect((await anonymous.context.newPage()).goto(`${store.app.baseUrl}/admin/queues`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    await anonymous.context.close();

    const { context, blocked } = await offlineContext(store.browser, store.app.baseUrl, {
      httpCredentials: { username: 'operator', password: store.app.adminToken },
    });
    const page = await context.newPage();
    const problems = pageProblems(page);
    await page.goto(`${store.app.baseUrl}/admin/queues`);
    await page.getByRole('link', { name: 'order-fulfilment' }).first().click();
    await page.getByRole('link', { name: /^completed/i }).click();
    // The job is named by its id, the order's utr; its Data tab shows the job's data and return value.
    const job = page.getByRole('link', { name: utr, exact: true });
    await job.waitFor();
    await screenshot(page, 'dashboard', { readme: true });
    await job.click();
    const data = page.getByRole('tabpanel', { name: 'Data' });
    await data.getByText('returnValue:').waitFor();
    const shown = await data.innerText();
    expect(shown).toContain(`utr:"${utr}"`);
    for (const [key, value] of Object.entries(returnValue as object)) expect(shown).toContain(`${key}:${JSON.stringify(value)}`);
    await screenshot(page, 'dashboard-job');
    // It works offline: nothing at all was asked of another origin (not even a web font).
    expect(blocked).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('lets its page take everything from this server only', async () => {
    const response = await store.app.request('/admin/queues', { headers: { Authorization: `Bearer ${store.app.adminToken}` } });
    expect(response.status).toBe(200);
    expect(await response.text()).not.toMatch(/https?:\/\//);
    const policy = response.headers.get('content-security-policy')!.split('; ');
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy.filter((directive) => !/^[a-z-]+( 'self'| 'unsafe-inline'| data:| 'none')+$/.test(directive))).toEqual([]);
  });

  it('opened with the token in its URL (http://x:TOKEN@host/), reopens without it and loads', async () => {
    const { context, blocked } = await offlineContext(store.browser, store.app.baseUrl);
    const page = await context.newPage();
    const problems = pageProblems(page);
    const withToken = new URL('/admin/queues', store.app.baseUrl);
    withToken.username = 'operator';
    withToken.password = store.app.adminToken;
    // The page's own requests refuse a page URL with credentials: kept, the page would never get past "Loading".
    await page.goto(withToken.href);
    await page.getByRole('link', { name: 'order-fulfilment' }).first().waitFor();
    expect(page.url()).toBe(`${store.app.baseUrl}/admin/queues`);
    expect(blocked).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
