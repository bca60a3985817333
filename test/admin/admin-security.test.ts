import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, tokenFor } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
let disabled: TestApp;
beforeAll(async () => {
  [app, disabled] = await Promise.all([startTestApp(), startTestApp({ env: { ADMIN_TOKEN: '' } })]);
});
afterAll(async () => Promise.all([app?.close(), disabled?.close()]));

const ENDPOINTS: Array<[string, string]> = [
  ['POST', '/admin/accounts'],
  ['POST', '/admin/accounts/1/balance'],
  ['POST', '/admin/card-services/1/codes'],
  ['GET', '/admin/card-services/1/stock'],
  ['GET', '/admin/orders'],
  ['POST', '/admin/orders/X/complete'],
  ['POST', '/admin/orders/X/refund'],
  ['GET', '/admin/queues'],
];

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('admin token (C13)', () => {
  it('answers 401 without a token, with a wrong one, with a client token or with key-pair headers', async () => {
    const keys = await createTestAccount(app);
    const clientToken = await tokenFor(app, keys);
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: `Bearer ${app.adminToken}x` },
      { Authorization: app.adminToken },
      { Authorization: `Bearer ${clientToken}` },
      { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
    ];
    for (const [method, path] of ENDPOINTS) {
      for (const headers of attempts) {
        const response = await app.request(path, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: method === 'POST' ? '{}' : undefined });
        expect(await expectFailure(response, 401), `${method} ${path}`).toBe('Invalid admin token.');
      }
    }
    const before = await app.services.sql`select count(*)::int as n from accounts`;
    await app.request('/admin/accounts', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ firstname: 'A', lastname: 'B' }) });
    expect((await app.services.sql`select count(*)::int as n from accounts`)[0]!.n).toBe(before[0]!.n);
  });

  it('does not accept HTTP Basic on the JSON endpoints', async () => {
    const response = await app.request('/admin/orders', { headers: { Authorization: basic('admin', app.adminToken) } });
    await expectFailure(response, 401);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('disables everything under /admin with 503 when ADMIN_TOKEN is unset, whatever is sent', async () => {
    for (const [method, path] of [...ENDPOINTS, ['GET', '/admin/nowhere'] as [string, string]]) {
      for (const headers of [{}, { Authorization: 'Bearer ' }, { Authorization: basic('a', '') }] as Array<Record<string, string>>) {
        const response = await disabled.request(path, { method, headers });
        expect(await expectFailure(response, 503), `${method} ${path}`).toBe('The admin API is disabled: ADMIN_TOKEN is not set.');
      }
    }
  });
});

describe('queue dashboard /admin/queues', () => {
  it('serves the dashboard over Basic (any user) and Bearer with the admin token', async () => {
    for (const authorization of [basic('operator', app.adminToken), basic('', app.adminToken), `Bearer ${app.adminToken}`]) {
      const response = await app.request('/admin/queues', { headers: { Authorization: authorization } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain('<html');
    }
    const auth = { Authorization: basic('x', app.adminToken) };
    const html = await (await app.request('/admin/queues', { headers: auth })).text();
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await app.request(`/admin/queues/${script}`, { headers: auth });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    const slash = await app.request('/admin/queues/', { headers: auth, redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([302, '/admin/queues']);
    const api = await app.request('/admin/queues/api/queues', { headers: auth });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(app.services.queues.all.map((q) => q.name)));
  });

  it('asks the browser for credentials without them or with a wrong password', async () => {
    const attempts: Array<Record<string, string>> = [{}, { Authorization: basic('operator', 'wrong') }, { Authorization: basic(app.adminToken, '') }];
    for (const headers of attempts) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const response = await app.request(path, { headers });
        await expectFailure(response, 401);
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="admin"');
      }
    }
  });
});
