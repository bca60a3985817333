import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, tokenFor } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { adminApi } from './admin.js';

let app: TestApp;
let disabled: TestApp;
beforeAll(async () => {
  [app, disabled] = await Promise.all([startTestApp(), startTestApp({ env: { ADMIN_TOKEN: '' } })]);
});
afterAll(async () => Promise.all([app?.close(), disabled?.close()]));

/** Every store route, with a body it would accept. */
const ROUTES: Array<[method: 'post' | 'patch', path: string, body: object]> = [
  ['post', '/admin/categories', { name: 'Sneaky', type: 'card' }],
  ['patch', '/admin/categories/1', { name: 'Sneaky' }],
  ['post', '/admin/top-ups', { category_id: 1, name: 'Sneaky', region: 'EU', order_information: [] }],
  ['patch', '/admin/top-ups/1', { name: 'Sneaky' }],
  ['post', '/admin/top-ups/1/services', { name: 'Sneaky', price: 1 }],
  ['patch', '/admin/top-up-services/1', { name: 'Sneaky' }],
  ['post', '/admin/cards', { category_id: 1, name: 'Sneaky' }],
  ['patch', '/admin/cards/1', { name: 'Sneaky' }],
  ['post', '/admin/cards/1/services', { name: 'Sneaky', price: 1 }],
  ['patch', '/admin/card-services/1', { name: 'Sneaky' }],
  ['post', '/admin/gateways', { code: 'sneaky', name: 'Sneaky' }],
  ['patch', '/admin/gateways/1', { name: 'Sneaky' }],
  ['post', '/admin/campaigns', { name: 'Sneaky', start_date: '2026-01-01', end_date: '2026-01-02' }],
  ['patch', '/admin/campaigns/1', { name: 'Sneaky' }],
  ['post', '/admin/campaigns/1/end', {}],
];

async function sneakyRows(target: TestApp) {
  const { sql } = target.services;
  const [row] = await sql`
    select (select count(*) from categories where name = 'Sneaky') + (select count(*) from top_ups where name = 'Sneaky')
         + (select count(*) from cards where name = 'Sneaky') + (select count(*) from gateways where name = 'Sneaky')
         + (select count(*) from campaigns where name = 'Sneaky') + (select count(*) from campaigns where status = 0) as n`;
  return Number(row!.n);
}

describe('store management requires the admin token (C13)', () => {
  it('answers 401 without a token, with a wrong one or with a client token, and changes nothing', async () => {
    const clientToken = await tokenFor(app, await createTestAccount(app));
    const callers = [adminApi(app, ''), adminApi(app, `${app.adminToken}x`), adminApi(app, clientToken)];
    for (const [method, path, body] of ROUTES) {
      for (const caller of callers) {
        expect(await expectFailure(await caller[method](path, body), 401), `${method} ${path}`).toBe('Invalid admin token.');
      }
    }
    expect(await sneakyRows(app)).toBe(0);
  });

  it('answers 503 when ADMIN_TOKEN is unset, whatever token is sent', async () => {
    for (const [method, path, body] of ROUTES) {
      expect(await expectFailure(await adminApi(disabled, 'anything-at-all-here')[method](path, body), 503), `${method} ${path}`).toBe(
        'The admin API is disabled: ADMIN_TOKEN is not set.',
      );
    }
    expect(await sneakyRows(disabled)).toBe(0);
  });
});
