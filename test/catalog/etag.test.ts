import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestAccount, expectJson, tokenFor } from '../helpers/api.js';
import { createOrderFor, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('cached catalog answers', () => {
  it('carry an ETag; a matching If-None-Match gets 304 without a body, until the catalog changes', async () => {
    const token = await tokenFor(app, await createTestAccount(app));
    const api = client(app, token);
    const topUp = await createTopUp(app.services.db, { name: 'Etag Quest' });
    const first = await api.get('/api/top-up/list');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const body = await expectJson(first, 200);
    // The same bytes again, while nothing changed.
    const again = await api.get('/api/top-up/list');
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.json()).toEqual(body);

    const notModified = await app.request('/api/top-up/list', { headers: { Authorization: `Bearer ${token}`, 'If-None-Match': etag! } });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    // A store change drops the cached bytes in every process: the next answer is new.
    const renamed = await app.request(`/admin/top-ups/${topUp.id}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Etag Quest II' }),
    });
    expect(renamed.status).toBe(200);
    const changed = await app.request('/api/top-up/list', { headers: { Authorization: `Bearer ${token}`, 'If-None-Match': etag! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(JSON.stringify(await changed.json())).toContain('Etag Quest II');
  });

  it('top-up details: a 304 while the caller\'s answer is unchanged, a new tag once the caller has ordered', async () => {
    const account = await createTestAccount(app);
    const token = await tokenFor(app, account);
    const topUp = await createTopUp(app.services.db, { name: 'Etag Details' });
    const path = `/api/top-up/details?slug=${topUp.slug}`;
    const ask = (etag: string) => app.request(path, { headers: { Authorization: `Bearer ${token}`, 'If-None-Match': etag } });
    const first = await client(app, token).get(path);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await expectJson(first, 200)).message.reviewStatic.hasAlreadyOrdered).toBe(false);

    const notModified = await ask(etag);
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    await createOrderFor(app.services.db, account.id, { topUpId: topUp.id, status: 1 });
    const changed = await ask(etag);
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect((await changed.json()).message.reviewStatic.hasAlreadyOrdered).toBe(true);
  });

  it('are never shared across the links of different pages or base URLs', async () => {
    const api = client(app, await tokenFor(app, await createTestAccount(app)));
    const one = await expectJson(await api.get('/api/top-up/list?per_page=1&page=1'), 200);
    const two = await expectJson(await api.get('/api/top-up/list?per_page=1&page=2'), 200);
    expect(one.message.current_page).toBe(1);
    expect(two.message.current_page).toBe(2);
  });

  it('still check the token first', async () => {
    expect((await app.request('/api/top-up/list')).status).toBe(401);
    expect((await app.request('/api/card/services', { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
  });
});
