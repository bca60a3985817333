import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, expectJson } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createCardService, createOrder, createTopUpOrder, createTopUpService } from '../helpers/fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const post = (path: string, body: unknown, type = 'application/json') =>
  app.request(path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const get = (path: string) => app.request(path, { headers: { Authorization: `Bearer ${app.adminToken}` } });

const count = async (table: string) => Number((await app.services.sql`select count(*) from ${app.services.sql(table)}`)[0]!.count);

describe('validation (422) writes nothing', () => {
  it('refuses an account without names, with a bad balance or email', async () => {
    const before = await count('accounts');
    expect(await expectFailure(await post('/admin/accounts', {}), 422)).toEqual([
      'The firstname field is required.',
      'The lastname field is required.',
    ]);
    expect(await expectFailure(await post('/admin/accounts', { firstname: 'A', lastname: 'B', balance: '1.234', email: 'nope' }), 422)).toEqual([
      'The email field must be a valid email address.',
      'The balance field must be a number with at most 2 decimals.',
    ]);
    expect(await count('accounts')).toBe(before);
  });

  it('refuses a currency the store has no rate for (C24)', async () => {
    const before = await count('accounts');
    expect(await expectFailure(await post('/admin/accounts', { firstname: 'A', lastname: 'B', currency: 'EUR' }), 422)).toEqual([
      'The selected currency is invalid: the store has no rate for EUR.',
    ]);
    expect(await count('accounts')).toBe(before);
  });

  it('refuses a balance move without amount or reason, or with a zero amount', async () => {
    const account = await createTestAccount(app);
    expect(await expectFailure(await post(`/admin/accounts/${account.id}/balance`, {}), 422)).toEqual([
      'The amount field is required.',
      'The reason field is required.',
    ]);
    expect(await expectFailure(await post(`/admin/accounts/${account.id}/balance`, { amount: '0.00', reason: 'x' }), 422)).toEqual([
      'The amount field must not be zero.',
    ]);
  });

  it('refuses an empty code list and a bad status filter', async () => {
    const { serviceId } = await createCardService(app.services.db);
    expect(await expectFailure(await post(`/admin/card-services/${serviceId}/codes`, { codes: [] }), 422)).toEqual([
      'The codes field is required.',
    ]);
    expect(await expectFailure(await post(`/admin/card-services/${serviceId}/codes`, '\n\n', 'text/plain'), 422)).toEqual([
      'The codes field is required.',
    ]);
    expect(await expectFailure(await get('/admin/orders?status=shipped'), 422)).toEqual([
      'The status field must be one of initiate, completed, refund, stock_short or 0 to 3.',
    ]);
    expect(await count('card_codes')).toBe(0);
  });

  it('refuses a refund without a reason', async () => {
    const account = await createTestAccount(app);
    const order = await createTopUpOrder(app.services.db, { accountId: account.id });
    expect(await expectFailure(await post(`/admin/orders/${order.utr}/refund`, {}), 422)).toEqual(['The reason field is required.']);
    const [row] = await app.services.sql`select status from orders where id = ${order.id}`;
    expect(row!.status).toBe(0);
  });

  it('answers 400 to a malformed JSON body', async () => {
    await expectFailure(await post('/admin/accounts', '{"firstname":'), 400);
  });
});

describe('content types (400)', () => {
  it('names text/plain and the JSON shape when the code import gets another content type', async () => {
    const { serviceId } = await createCardService(app.services.db);
    for (const type of ['application/xml', 'text/csv', 'application/x-www-form-urlencoded']) {
      expect(await expectFailure(await post(`/admin/card-services/${serviceId}/codes`, 'codes=X-1', type), 400), type).toBe(
        'Unsupported content type. Send text/plain (one code per line) or application/json {"codes": [...]}.',
      );
    }
    expect(await count('card_codes')).toBe(0);
  });

  it('names JSON alone on the routes that take JSON alone', async () => {
    const before = await count('accounts');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      expect(await expectFailure(await post('/admin/accounts', 'firstname=A&lastname=B', type), 400), type).toBe(
        'Unsupported content type. Send application/json.',
      );
    }
    expect(await count('accounts')).toBe(before);
  });
});

describe('unknown resources (404)', () => {
  it('names the unknown account, card service and utr', async () => {
    expect(await expectFailure(await post('/admin/accounts/999999/balance', { amount: 1, reason: 'x' }), 404)).toBe('No account with id 999999.');
    expect(await expectFailure(await post('/admin/accounts/abc/balance', { amount: 1, reason: 'x' }), 404)).toBe('No account with id "abc".');
    expect(await expectFailure(await post('/admin/accounts/2147483648/balance', { amount: 1, reason: 'x' }), 404)).toBe('No account with id 2147483648.');
    expect(await expectFailure(await post('/admin/card-services/999999/codes', { codes: ['X'] }), 404)).toBe('No card service with id 999999.');
    expect(await expectFailure(await post('/admin/card-services/999999/codes', 'X\n', 'text/plain'), 404)).toBe('No card service with id 999999.');
    expect(await expectFailure(await get('/admin/card-services/999999/stock'), 404)).toBe('No card service with id 999999.');
    expect(await expectFailure(await post('/admin/orders/NOPE/complete', {}), 404)).toBe('No order with the utr "NOPE".');
    expect(await expectFailure(await post('/admin/orders/NOPE/refund', { reason: 'x' }), 404)).toBe('No order with the utr "NOPE".');
    expect(await expectFailure(await post('/admin/orders/no-pe/refund', { reason: 'x' }), 404)).toBe('No order with the utr "no-pe".');
  });
});

describe('business rules (409)', () => {
  it('never takes a balance below zero', async () => {
    const account = await createTestAccount(app, '3.00');
    expect(await expectFailure(await post(`/admin/accounts/${account.id}/balance`, { amount: -3.01, reason: 'x' }), 409)).toBe(
      'The balance cannot go below zero.',
    );
    const [row] = await app.services.sql`select balance from accounts where id = ${account.id}`;
    expect(row!.balance).toBe('3.00');
  });

  it('refuses to complete a card order or a finished order, and to refund a finished one, saying why', async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const top = await createTopUpService(app.services.db);
    const account = await createTestAccount(app);
    const card = await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, status: 3, codesOwed: 1 });
    const done = await createOrder(app.services.db, { accountId: account.id, ...top, status: 1 });
    const refunded = await createOrder(app.services.db, { accountId: account.id, ...top, status: 2 });
    expect(await expectFailure(await post(`/admin/orders/${card.utr}/complete`, {}), 409)).toBe(
      'Only top-up orders are completed by an operator; card orders complete when their codes are assigned.',
    );
    expect(await expectFailure(await post(`/admin/orders/${done.utr}/complete`, {}), 409)).toBe('The order is already completed.');
    expect(await expectFailure(await post(`/admin/orders/${done.utr}/refund`, { reason: 'x' }), 409)).toBe('The order is completed and cannot be refunded.');
    expect(await expectFailure(await post(`/admin/orders/${refunded.utr}/refund`, { reason: 'x' }), 409)).toBe('The order is already refunded.');
    expect(await expectFailure(await post(`/admin/orders/${refunded.utr}/complete`, {}), 409)).toBe('The order is refunded and cannot be completed.');
    const rows = await app.services.sql`select status from orders where id in (${card.id}, ${done.id}, ${refunded.id}) order by id`;
    expect(rows.map((r) => r.status)).toEqual([3, 1, 2]);
  });
});

describe('an import with no worker process running', () => {
  it('answers at once with the waiting orders its codes completed: it never waits on a worker', async () => {
    const { id: accountId } = await createTestAccount(app);
    const { serviceId, cardId } = await createCardService(app.services.db);
    const waiting = await createOrder(app.services.db, { accountId, cardId, serviceId, status: 3, codesOwed: 1 });
    const started = Date.now();
    const body = await expectJson(await post(`/admin/card-services/${serviceId}/codes`, 'N-1\n', 'text/plain'), 200);
    expect(body.message).toEqual({ added: 1, skipped: 0, fulfilled_orders: 1 });
    // The queue's restock would have waited 10 s for a worker, then answered null.
    expect(Date.now() - started).toBeLessThan(5000);
    const [order] = await app.services.sql<{ status: number }[]>`select status from orders where id = ${waiting.id}`;
    expect(order!.status).toBe(1);
    expect(await app.services.queues.restock.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });
});
