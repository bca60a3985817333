/**
 * C25: test mode, against the real service and workers. A test key's token sees the same catalog and endpoints, pays
 * from the account's test balance, and its orders (`livemode: false`) go through the same workers, state machine and
 * outbox as live ones, fulfilled by the test rules: generated TEST- codes (a line of 13 waits stock_short, then gets
 * the rest 30 s later), top-ups by their first field's last four digits. It never touches live stock, campaign
 * counters, suppliers, balances, orders, webhooks or metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utrOfTopUpOrder, type Order, type StoreClient } from '@topup-store/client';
import { adminOf, client, expectFailure, storeClientFor, successMessage, tokenFor, type Json } from '../helpers/api.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { waitFor } from '../helpers/system.js';
import type { OrderField } from '../../src/db/schema.js';
import { advanceTestOrder } from '../../src/modules/fulfilment/test-mode.js';
import { newUtr, placeOrder } from '../../src/modules/orders/service.js';
import { routingJobId } from '../../src/queues/index.js';

let app: TestApp;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

beforeAll(async () => {
  app = await startTestApp({
    workers: true,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    workerOptions: { webhookRetryDelaysMs: [100, 200, 300], webhookRelay: { intervalMs: 100, lostAfterMs: 1000 } },
  });
});
afterAll(async () => app?.close());

/** A new account (its live balance `balance`) with a live and a test token. */
async function shop(balance = '50.00') {
  const keys = await successMessage(admin('POST', '/accounts', { firstname: 'Test', lastname: 'Shop', balance }));
  const testKey = await successMessage(admin('POST', `/accounts/${keys.id}/keys`, { mode: 'test' }));
  const liveKeys = keys as { publicKey: string; secretKey: string };
  const testKeys = { publicKey: testKey.public_key as string, secretKey: testKey.secret_key as string };
  return {
    id: keys.id as number,
    testKey,
    // As a reseller's code calls the store (the TypeScript client), and as raw HTTP for envelopes and explicit keys.
    liveStore: storeClientFor(app, liveKeys),
    testStore: storeClientFor(app, testKeys),
    live: client(app, await tokenFor(app, liveKeys)),
    test: client(app, await tokenFor(app, testKeys)),
  };
}

const FORM: OrderField[] = [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }];
const orderOf = async (store: StoreClient, utr: string) => (await store.GET('/api/order/details', { params: { query: { utr } } })).data.message;
/** The codes of an order's first line (none for a top-up). */
const codesOf = (order: Order) => order.order_details.flatMap((line, i) => (i === 0 && 'card_codes' in line ? line.card_codes : []));
const statusOf = async (utr: string) => (await app.services.sql<{ status: number }[]>`select status from orders where utr = ${utr}`)[0]!.status;
const accountRow = async (id: number) => (await app.services.sql`select balance, test_balance from accounts where id = ${id}`)[0]!;
const freeCodes = async (serviceId: number) =>
  (await app.services.sql<{ n: number }[]>`select count(*)::int as n from card_codes where card_service_id = ${serviceId} and order_line_id is null`)[0]!.n;
const buyCard = async (store: StoreClient, serviceId: number, quantity: number) =>
  (await store.POST('/api/card/make-order', { body: { service_ids: [serviceId], quantities: [quantity] } })).data.message.utr;
const buyTopUp = async (store: StoreClient, topUpId: number, serviceId: number, playerId: string) =>
  utrOfTopUpOrder((await store.POST('/api/top-up/make-order', { body: { topUpId, serviceId, player_id: playerId } })).data.message);

describe('test keys and the test balance', () => {
  it('a test key pair is pk_test_/sk_test_; its first token opens a test balance of 1,000.00 that an operator can set', async () => {
    const s = await shop('0.00');
    expect(s.testKey).toMatchObject({ mode: 'test', scope: 'full' });
    expect(s.testKey.public_key).toMatch(/^pk_test_/);
    expect(s.testKey.secret_key).toMatch(/^sk_test_/);
    expect(await accountRow(s.id)).toMatchObject({ balance: '0.00', test_balance: '1000.00' });
    expect(await successMessage(admin('POST', `/accounts/${s.id}/test-balance`, { amount: '25.50' }))).toEqual({ id: s.id, test_balance: '25.50' });
    // The test statement shows the operator's change; the live one does not.
    const testStatement = (await s.testStore.GET('/api/account/statement')).data.message.data;
    expect(testStatement[0]).toMatchObject({ kind: 'adjustment', amount: '-974.50', balance_after: '25.50' });
    expect((await s.liveStore.GET('/api/account/statement')).data.message.data).toEqual([]);
    expect(await expectFailure(await admin('POST', '/accounts/999999/test-balance', { amount: '1' }), 404)).toBe('No account with id 999999.');
    for (const amount of ['-1.00', '1.001', 'ten', undefined]) {
      const refused = await expectFailure(await admin('POST', `/accounts/${s.id}/test-balance`, amount === undefined ? {} : { amount }), 422);
      expect(JSON.stringify(refused)).toContain('The amount field');
    }
    expect((await accountRow(s.id)).test_balance).toBe('25.50');
  });
});

describe('test card orders', () => {
  it('complete with generated TEST- codes, paid from the test balance; live stock, balance and lists are untouched', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const serviceId = card.services[0]!.id;
    // No stock at all: a test order never needs any.
    const utr = await buyCard(s.testStore, serviceId, 2);
    await waitFor('the test order to complete', async () => (await statusOf(utr)) === 1);
    const entry = await orderOf(s.testStore, utr);
    expect(entry).toMatchObject({ livemode: false, status_label: 'completed', price: 20 });
    expect(codesOf(entry)).toEqual([expect.stringMatching(/^TEST-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}$/), expect.stringMatching(/^TEST-/)]);
    expect(await accountRow(s.id)).toMatchObject({ balance: '50.00', test_balance: '980.00' });
    expect(await freeCodes(serviceId)).toBe(0);
    // Its codes are no stock: marked so, they never count as the newest code the service gave out, where fulfilment
    // starts its walk for free codes (card_codes_taken_idx).
    expect(await app.services.sql`select livemode, count(*)::int as n from card_codes where card_service_id = ${serviceId} group by livemode`).toEqual([
      { livemode: false, n: 2 },
    ]);
    // Seen only by test tokens.
    expect((await s.liveStore.GET('/api/get-card/orders')).data.message.data).toEqual([]);
    expect(await expectFailure(await s.live.get(`/api/order/details?utr=${utr}`), 404)).toBe(`No order with the utr ${JSON.stringify(utr)}.`);
    expect((await s.testStore.GET('/api/get-card/orders')).data.message.data.map((o) => o.utr)).toEqual([utr]);
    // Nor by the operators' live list, unless asked.
    const listed = async (mode: string) => ((await successMessage(admin('GET', `/orders?mode=${mode}&per_page=100`))).data as Json[]).map((o) => o.utr);
    expect(await listed('live')).not.toContain(utr);
    expect(await listed('test')).toContain(utr);
    expect(await listed('all')).toContain(utr);
  });

  it('a campaign price applies, its counter does not move; an order beyond the test balance is a 409', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const serviceId = card.services[0]!.id;
    await createCampaign(app.services.db, { cardServices: [{ serviceId, price: '7.00', maxSell: 5 }] });
    const utr = await buyCard(s.testStore, serviceId, 3);
    expect((await app.services.sql`select total from orders where utr = ${utr}`)[0]!.total).toBe('21.00');
    expect((await app.services.sql`select offered_sell from card_services where id = ${serviceId}`)[0]!.offered_sell).toBe(0);
    await successMessage(admin('POST', `/accounts/${s.id}/test-balance`, { amount: '5.00' }));
    expect(await expectFailure(await s.test.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }), 409)).toBe('Insufficient balance');
  });

  it('a line of 13 waits stock_short with one code, then gets the rest 30 s later; every webhook goes to the test endpoint only', async () => {
    const s = await shop();
    const [testHooks, liveHooks] = await Promise.all([startReceiver(), startReceiver()]);
    try {
      const testEndpoint = await successMessage(s.test.postJson('/api/webhooks', { url: testHooks.url }));
      testHooks.trust(testEndpoint.secret);
      const liveEndpoint = await successMessage(s.live.postJson('/api/webhooks', { url: liveHooks.url }));
      liveHooks.trust(liveEndpoint.secret);
      // Each mode lists its own endpoints.
      expect(((await successMessage(s.test.get('/api/webhooks'))) as unknown as Json[]).map((e) => e.id)).toEqual([testEndpoint.id]);

      const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
      const utr = await buyCard(s.testStore, card.services[0]!.id, 13);
      await waitFor('stock_short', async () => (await statusOf(utr)) === 3);
      expect(codesOf(await orderOf(s.testStore, utr))).toHaveLength(1);
      await waitFor('the restock 30 s later', async () => (await statusOf(utr)) === 1, 45_000);
      expect(codesOf(await orderOf(s.testStore, utr))).toHaveLength(13);
      await waitFor('both events', async () => testHooks.received.length === 2, 10_000);
      expect(testHooks.received.map((e) => [e.type, e.data.utr, e.data.livemode])).toEqual([
        ['order.stock_short', utr, false],
        ['order.completed', utr, false],
      ]);
      expect(liveHooks.received).toEqual([]);
    } finally {
      await Promise.all([testHooks.close(), liveHooks.close()]);
    }
  }, 60_000);

  it('a stock_short order whose restock job Redis lost gets its restock all the same (the reconciler adds the job again)', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const utr = await buyCard(s.testStore, card.services[0]!.id, 13);
    await waitFor('stock_short', async () => (await statusOf(utr)) === 3);
    // Redis loses the restock's delayed job, and the 30 s it waited for have passed.
    const [order] = await app.services.sql<{ routing_step: number }[]>`select routing_step from orders where utr = ${utr}`;
    const job = await app.services.queues.routing.getJob(routingJobId(utr, order!.routing_step));
    expect(await job!.getState()).toBe('delayed');
    await job!.remove();
    await app.services.sql`update orders set updated_at = now() - interval '1 minute' where utr = ${utr}`;
    await waitFor('the restock', async () => (await statusOf(utr)) === 1, 20_000);
    expect(codesOf(await orderOf(s.testStore, utr))).toHaveLength(13);
  }, 30_000);
});

describe('test top-ups', () => {
  it('settle by the first field: 0000 refused and refunded, 1111 pending 30 s then completed, anything else completed', async () => {
    const s = await shop();
    const topUp = await createTopUp(app.services.db, { orderFields: FORM, services: [{ price: '5.00' }] });
    const serviceId = topUp.services[0]!.id;
    const [refused, pending, done] = await Promise.all(['5120000', '5121111', '5123456'].map((id) => buyTopUp(s.testStore, topUp.id, serviceId, id)));
    await waitFor('the refused and the completed one', async () => (await statusOf(refused!)) === 2 && (await statusOf(done!)) === 1);
    expect(await statusOf(pending!)).toBe(0);
    // 1000 − 3 × 5 + the refund of 5.
    expect((await accountRow(s.id)).test_balance).toBe('990.00');
    const kinds = (await s.testStore.GET('/api/account/statement')).data.message.data.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'order_refund')).toHaveLength(1);
    await waitFor('the pending one, 30 s later', async () => (await statusOf(pending!)) === 1, 45_000);
    // No supplier was asked: no attempt was ever recorded.
    expect((await app.services.sql`select count(*)::int as n from provider_attempts a join orders o on o.id = a.order_id where o.account_id = ${s.id}`)[0]!.n).toBe(0);
  }, 60_000);
});

describe('isolation', () => {
  it('a test order buys nothing: no review of the product, no hasAlreadyOrdered', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const utr = await buyCard(s.testStore, card.services[0]!.id, 1);
    await waitFor('the test order', async () => (await statusOf(utr)) === 1);
    for (const api of [s.live, s.test]) {
      const refused = await api.postJson('/api/card/review', { card_id: card.id, rating: 5, comment: 'free codes' });
      expect(await expectFailure(refused, 409)).toBe('Only customers who ordered this product can review it.');
    }
    const topUp = await createTopUp(app.services.db, { orderFields: FORM, services: [{ price: '1.00' }] });
    const topUpUtr = await buyTopUp(s.testStore, topUp.id, topUp.services[0]!.id, '5123456');
    await waitFor('the test top-up', async () => (await statusOf(topUpUtr)) === 1);
    for (const api of [s.live, s.test]) expect((await successMessage(api.get(`/api/top-up/details?slug=${topUp.slug}`))).reviewStatic.hasAlreadyOrdered).toBe(false);
  });

  it("an Idempotency-Key of a test token never replays a live order's, nor one a live token could send", async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    const testUtr = (await successMessage(s.test.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'K1' }))).utr;
    for (const key of ['K1', 'test:K1']) {
      const liveUtr = (await successMessage(s.live.postJson('/api/card/make-order', body, { 'Idempotency-Key': key }))).utr;
      expect(liveUtr).not.toBe(testUtr);
      expect((await app.services.sql`select livemode from orders where utr = ${liveUtr}`)[0]!.livemode).toBe(true);
    }
    // The test token's own repeat replays its own order.
    expect((await successMessage(s.test.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'K1' }))).utr).toBe(testUtr);

    // A top-up's repeat is answered before anything else is checked: still each mode its own.
    const topUp = await createTopUp(app.services.db, { orderFields: FORM, services: [{ price: '1.00' }] });
    const topUpBody = { topUpId: topUp.id, serviceId: topUp.services[0]!.id, player_id: '5123456' };
    const placed = async (api: typeof s.live) => String(await successMessage(api.postJson('/api/top-up/make-order', topUpBody, { 'Idempotency-Key': 'T1' })));
    const [liveTopUp, testTopUp] = [await placed(s.live), await placed(s.test)];
    expect(testTopUp).not.toBe(liveTopUp);
    expect([await placed(s.live), await placed(s.test)]).toEqual([liveTopUp, testTopUp]);
  });

  it('a test step whose next job cannot be added rolls back, and a refused top-up run again changes nothing', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const placed = await placeOrder(app.services.db, {
      accountId: s.id, kind: 'card', utr: newUtr('card'), topUpId: null, informations: null, fields: null,
      lines: [{ serviceId: card.services[0]!.id, quantity: 13 }], idempotency: null, livemode: false,
    });
    if (placed.kind !== 'placed') throw new Error('not placed');
    const deps = { db: app.services.db, codeKey: app.services.config.codeEncryptionKey, observe: () => {} };
    const down = () => Promise.reject(new Error('redis is down'));
    await expect(advanceTestOrder({ ...deps, scheduleStep: down }, placed.orderId, 0)).rejects.toThrow('redis is down');
    const [row] = await app.services.sql`select status, routing_step, (select count(*)::int from card_codes c join order_lines l on l.id = c.order_line_id where l.order_id = o.id) as codes from orders o where id = ${placed.orderId}`;
    expect(row).toEqual({ status: 0, routing_step: 0, codes: 0 });
    const scheduled: number[] = [];
    expect(await advanceTestOrder({ ...deps, scheduleStep: async (_o, step) => void scheduled.push(step) }, placed.orderId, 0)).toBe('stock_short');
    expect(scheduled).toEqual([1]);

    const topUp = await createTopUp(app.services.db, { orderFields: FORM, services: [{ price: '1.00' }] });
    const refused = await buyTopUp(s.testStore, topUp.id, topUp.services[0]!.id, '5120000');
    await waitFor('the refund', async () => (await statusOf(refused)) === 2);
    const [row2] = await app.services.sql<{ id: number }[]>`select id::float8 as id from orders where utr = ${refused}`;
    expect(await advanceTestOrder({ ...deps, scheduleStep: down }, row2!.id, 0)).toBe('noop');
    expect((await app.services.sql`select count(*)::int as n from balance_ledger l join orders o on o.id = l.order_id where o.utr = ${refused} and l.kind = 'order_refund'`)[0]!.n).toBe(1);
  });

  it('a burst of 1,000 test orders leaves the live ledger, stock, balances, campaign counters and metrics as they were', async () => {
    const s = await shop();
    const card = await createCard(app.services.db, { services: [{ price: '0.50' }] });
    const serviceId = card.services[0]!.id;
    await createCampaign(app.services.db, { cardServices: [{ serviceId, price: '0.40', maxSell: 10 }] });
    await app.services.sql`insert into card_codes (card_service_id, code_encrypted, code_digest)
      select ${serviceId}, decode(md5(g::text), 'hex'), decode(md5('d' || g::text), 'hex') from generate_series(1, 5) g`;
    const liveBefore = async () => ({
      ledger: await app.services.sql`select id, account_id, amount, balance_after, kind, order_id from balance_ledger where livemode order by id`,
      stock: await app.services.sql`select id, card_service_id from card_codes where order_line_id is null order by id`,
      balances: await app.services.sql`select id, balance, card_order_count, top_up_order_count from accounts order by id`,
      counters: await app.services.sql`select id, offered_sell from card_services order by id`,
      liveOrders: await app.services.sql`select count(*)::int as n from orders where livemode`,
    });
    const metric = async () => (await (await fetch(`${app.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${app.services.config.METRICS_TOKEN}` } })).text())
      .split('\n')
      .filter((line) => /^orders_placed_total\{kind="card",mode="live"\}/.test(line));
    // A live order first, so the live series exist and a test order moving them would show.
    const liveUtr = await buyCard(s.liveStore, serviceId, 1);
    await waitFor('the live order', async () => (await statusOf(liveUtr)) === 1);
    const before = await liveBefore();
    const liveMetric = await metric();
    await successMessage(admin('POST', `/accounts/${s.id}/test-balance`, { amount: '1000.00' }));
    for (let batch = 0; batch < 50; batch++) {
      await Promise.all(Array.from({ length: 20 }, () => buyCard(s.testStore, serviceId, 1)));
    }
    await waitFor('1,000 test orders completed', async () => {
      const [row] = await app.services.sql<{ n: number }[]>`select count(*)::int as n from orders where account_id = ${s.id} and not livemode and status = 1`;
      return row!.n === 1000;
    }, 120_000);
    expect(await liveBefore()).toEqual(before);
    expect(await metric()).toEqual(liveMetric);
    expect((await accountRow(s.id)).test_balance).toBe('600.00');
  }, 180_000);
});
