import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectJson, ISO_MICROS, tokenFor } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createCardService, createOrder, createTopUpOrder, createTopUpService } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/system.js';
import { awaitedUpTo, importCodes, restockHere } from '../../src/modules/admin/service.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workers: true });
});
afterAll(async () => app?.close());

const admin = (path: string, init: { method?: string; body?: unknown; text?: string } = {}) =>
  app.request(path, {
    method: init.method ?? (init.body !== undefined || init.text !== undefined ? 'POST' : 'GET'),
    headers: {
      Authorization: `Bearer ${app.adminToken}`,
      'Content-Type': init.text !== undefined ? 'text/plain' : 'application/json',
    },
    body: init.text ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });

describe('POST /admin/accounts', () => {
  it('creates an account whose key pair and opening balance work at once', async () => {
    const body = await expectJson(
      await admin('/admin/accounts', { body: { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.com', balance: '25.50' } }),
      200,
    );
    expect(body.status).toBe('success');
    expect(Object.keys(body.message).sort()).toEqual(['apiKey', 'id', 'publicKey', 'secretKey']);
    expect(body.message.id).toBeTypeOf('number');
    expect(body.message.publicKey).toMatch(/^pk_/);
    expect(body.message.secretKey).toMatch(/^sk_/);
    expect(body.message.apiKey).toMatch(/^ak_/);
    await tokenFor(app, body.message);
    const [row] = await app.services.sql`select balance, currency, email from accounts where id = ${body.message.id}`;
    expect(row).toEqual({ balance: '25.50', currency: 'USD', email: 'ada@example.com' });
    const ledger = await app.services.sql`select amount, kind from balance_ledger where account_id = ${body.message.id}`;
    expect(ledger).toEqual([{ amount: '25.50', kind: 'deposit' }]);
  });

  it('accepts the store currency spelled out and no balance', async () => {
    const body = await expectJson(await admin('/admin/accounts', { body: { firstname: 'A', lastname: 'B', currency: 'USD' } }), 200);
    const [row] = await app.services.sql`select balance from accounts where id = ${body.message.id}`;
    expect(row!.balance).toBe('0.00');
  });
});

describe('POST /admin/accounts/:id/balance', () => {
  it('credits and debits through the ledger and answers the new balance', async () => {
    const account = await createTestAccount(app, '10.00');
    const credited = await expectJson(await admin(`/admin/accounts/${account.id}/balance`, { body: { amount: 5.25, reason: 'bonus' } }), 200);
    expect(credited).toEqual({ status: 'success', message: { balance: 15.25 } });
    const debited = await expectJson(
      await admin(`/admin/accounts/${account.id}/balance`, { body: { amount: '-15.25', reason: 'chargeback' } }),
      200,
    );
    expect(debited.message).toEqual({ balance: 0 });
    const ledger = await app.services.sql`
      select amount, kind, reason from balance_ledger where account_id = ${account.id} order by id`;
    expect(ledger.map((r) => [r.amount, r.kind, r.reason])).toEqual([
      ['10.00', 'deposit', 'Opening balance'],
      ['5.25', 'deposit', 'bonus'],
      ['-15.25', 'adjustment', 'chargeback'],
    ]);
  });
});

describe('card codes and stock', () => {
  it('imports JSON codes, skips duplicates, and reports stock', async () => {
    const { serviceId } = await createCardService(app.services.db);
    const first = await expectJson(await admin(`/admin/card-services/${serviceId}/codes`, { body: { codes: ['A-1', 'A-2', 'A-2'] } }), 200);
    expect(first.message).toEqual({ added: 2, skipped: 1, fulfilled_orders: 0 });
    const stock = await expectJson(await admin(`/admin/card-services/${serviceId}/stock`), 200);
    expect(stock).toEqual({ status: 'success', message: { available: 2, reserved_for_stock_short: 0 } });
  });

  it('imports text/plain codes and fulfils the waiting stock_short orders', async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const account = await createTestAccount(app);
    const waiting = await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, quantity: 2, codesOwed: 2, status: 3 });
    const before = await expectJson(await admin(`/admin/card-services/${serviceId}/stock`), 200);
    expect(before.message).toEqual({ available: 0, reserved_for_stock_short: 2 });

    const body = await expectJson(await admin(`/admin/card-services/${serviceId}/codes`, { text: 'B-1\r\nB-2\n\nB-3\n' }), 200);
    expect(body.message).toEqual({ added: 3, skipped: 0, fulfilled_orders: 1 });
    const [order] = await app.services.sql`select status from orders where id = ${waiting.id}`;
    expect(order!.status).toBe(1);
    const after = await expectJson(await admin(`/admin/card-services/${serviceId}/stock`), 200);
    expect(after.message).toEqual({ available: 1, reserved_for_stock_short: 0 });
  });

  it('answers fulfilled_orders null when the restock outlasts its wait, which then finishes in the background (C13)', async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const account = await createTestAccount(app);
    const waiting = await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, quantity: 1, codesOwed: 1, status: 3 });
    const { db, config } = app.services;
    // A restock held until the answer is out: the import has waited its time (here 50 ms, 10 s over HTTP) and says null.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const late: unknown[] = [];
    const restock = awaitedUpTo(async (id) => (await held, restockHere(db)(id)), 50, (err) => late.push(err));
    expect(await importCodes({ db, codeKey: config.codeEncryptionKey, restock }, serviceId, ['C-1'])).toEqual({ added: 1, skipped: 0, fulfilled_orders: null });
    expect((await app.services.sql`select status from orders where id = ${waiting.id}`)[0]!.status).toBe(3);
    release();
    await waitFor('the restock to finish', async () => (await app.services.sql`select status from orders where id = ${waiting.id}`)[0]!.status === 1);
    expect(late).toEqual([]);
    // One that ends within its wait answers its count.
    expect(await importCodes({ db, codeKey: config.codeEncryptionKey, restock: awaitedUpTo(restockHere(db), 5000, (err) => late.push(err)) }, serviceId, ['C-2'])).toEqual({
      added: 1,
      skipped: 0,
      fulfilled_orders: 0,
    });
  });
});

describe('orders', () => {
  it('lists orders of every account, newest first, filtered by label or number, without codes', async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const top = await createTopUpService(app.services.db);
    const [a, b] = [await createTestAccount(app), await createTestAccount(app)];
    const card = await createOrder(app.services.db, { accountId: a.id, cardId, serviceId, status: 3, codesOwed: 1 });
    const topUp = await createOrder(app.services.db, { accountId: b.id, ...top, unitPrice: '5.00' });

    const all = await expectJson(await admin('/admin/orders?per_page=100'), 200);
    expect(all.message.total).toBeGreaterThanOrEqual(2);
    expect(all.message.per_page).toBe(100);
    const utrs = all.message.data.map((o: { utr: string }) => o.utr);
    expect(utrs.indexOf(topUp.utr)).toBeLessThan(utrs.indexOf(card.utr));
    // A top-up says where its delivery stands: nothing sent yet, no workers here.
    expect(all.message.data.find((o: { utr: string }) => o.utr === topUp.utr)).toMatchObject({ price: '5.00', delivery: 'routing' });

    for (const status of ['initiate', '0']) {
      const page = await expectJson(await admin(`/admin/orders?status=${status}`), 200);
      expect(page.message.data.every((o: { status: number }) => o.status === 0)).toBe(true);
      expect(page.message.data.map((o: { utr: string }) => o.utr)).toContain(topUp.utr);
    }
    const short = await expectJson(await admin('/admin/orders?status=stock_short&page=1'), 200);
    const entry = short.message.data.find((o: { utr: string }) => o.utr === card.utr);
    expect(entry).toMatchObject({
      utr: card.utr,
      account_id: a.id,
      kind: 'card',
      status: 3,
      status_label: 'stock_short',
      // Money as operators read it everywhere: strings with two decimals.
      price: '10.00',
      refunded_amount: '0.00',
      currency: 'USD',
      symbol: '$',
      informations: null,
      delivery: null,
      completed_at: null,
    });
    expect(entry.created_at).toMatch(ISO_MICROS);
    expect(entry.lines).toEqual([
      { card_service_id: serviceId, top_up_service_id: null, quantity: 1, unit_price: '10.00', line_total: '10.00', campaign_units: 0, codes_owed: 1 },
    ]);
    expect(JSON.stringify(short.message)).not.toMatch(/card_codes|code_encrypted/);
    expect(short.message.first_page_url).toBe(`${app.baseUrl}/admin/orders?status=stock_short&page=1`);
  });

  it('completes a top-up order with a note', async () => {
    const account = await createTestAccount(app);
    const order = await createTopUpOrder(app.services.db, { accountId: account.id });
    const body = await expectJson(await admin(`/admin/orders/${order.utr}/complete`, { body: { note: 'sent by hand' } }), 200);
    expect(body).toEqual({ status: 'success', message: { utr: order.utr, status: 1 } });
    const [row] = await app.services.sql`select status, note, completed_at from orders where id = ${order.id}`;
    expect(row).toMatchObject({ status: 1, note: 'sent by hand' });
    expect(row!.completed_at).not.toBeNull();
  });

  it('refunds a waiting order once, crediting the undelivered value', async () => {
    const account = await createTestAccount(app, '0.00');
    const order = await createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '7.50' });
    const body = await expectJson(await admin(`/admin/orders/${order.utr}/refund`, { body: { reason: 'out of service' } }), 200);
    expect(body).toEqual({ status: 'success', message: { utr: order.utr, status: 2, refunded_amount: '7.50' } });
    const [row] = await app.services.sql`select balance from accounts where id = ${account.id}`;
    expect(row!.balance).toBe('7.50');
  });
});
