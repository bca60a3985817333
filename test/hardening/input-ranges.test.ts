import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, createTestAccount, expectFailure, expectJson, type Json } from '../helpers/api.js';
import { createCard, createOrderFor, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';

/**
 * C2 ranges and the text rule: ids past the integer columns, NUL characters, unpaired surrogates and
 * amounts past the money column get the documented answer and write nothing, on every interface.
 */
let app: TestApp;
let api: Awaited<ReturnType<typeof buyer>>['api'];
let writes: () => Promise<number>;
let topUp: Awaited<ReturnType<typeof createTopUp>>;
let card: Awaited<ReturnType<typeof createCard>>;
let apiKey: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ api } = await buyer(app));
  topUp = await createTopUp(app.services.db, {
    orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
  });
  card = await createCard(app.services.db);
  const owner = await createTestAccount(app);
  apiKey = owner.apiKey;
  writes = (await watchWrites(app.services.sql)).count;
});
afterAll(async () => app?.close());

const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
  app.request(path, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });

/** Runs `request` and checks it wrote nothing at all. */
async function refused(request: () => Promise<Response>): Promise<Response> {
  const before = await writes();
  const response = await request();
  expect(await writes(), `${response.status} wrote rows`).toBe(before);
  return response;
}

// Past the integer columns: the first id that cannot exist, 2^53 and far beyond.
const BEYOND = ['2147483648', '3000000000', '9007199254740993', '100000000000000000000000000000'];

describe('ids past the integer range (C2)', () => {
  it('answer 404 in the query of every Interface A endpoint that takes one', async () => {
    const paths = [
      '/api/top-up/list?category_id=',
      '/api/topup/services?top_up_id=',
      '/api/get-card?category_id=',
      '/api/card/details?card_id=',
      '/api/card/services?card_id=',
      '/api/topup/review?top_up_id=',
      '/api/card/review?card_id=',
    ];
    for (const path of paths) {
      for (const id of BEYOND) {
        expect(await expectFailure(await refused(() => api.get(`${path}${id}`)), 404), `${path}${id}`).toBeTypeOf('string');
      }
    }
  });

  it('answer 422 "The selected … is invalid." inside an Interface A body', async () => {
    for (const id of BEYOND) {
      const big = Number(id);
      expect(await expectFailure(await refused(() => api.postJson('/api/card/make-order', { service_ids: [big], quantities: [1] })), 422)).toEqual([
        'The selected service ids is invalid.',
      ]);
      expect(await expectFailure(await refused(() => api.postForm('/api/card/make-order', { 'service_ids[]': id, 'quantities[]': '1' })), 422)).toEqual([
        'The selected service ids is invalid.',
      ]);
      expect(
        await expectFailure(await refused(() => api.postForm('/api/top-up/make-order', { topUpId: id, serviceId: id, player_id: 'p1' })), 422),
      ).toEqual(['The selected top up id is invalid.', 'The selected service id is invalid.']);
      expect(await expectFailure(await refused(() => api.postForm('/api/topup/review', { topUpId: id, rating: '5', comment: 'ok' })), 422)).toEqual([
        'The selected top up id is invalid.',
      ]);
      expect(await expectFailure(await refused(() => api.postJson('/api/card/review', { card_id: big, rating: 5, comment: 'ok' })), 422)).toEqual([
        'The selected card id is invalid.',
      ]);
    }
  });

  it('answer "Item not found." (404) on Interface B', async () => {
    for (const id of BEYOND) {
      const response = await refused(() => app.request(`/license-api/items/item?item_id=${id}`, { headers: { 'X-API-Key': apiKey } }));
      expect(await expectJson(response, 404)).toEqual({ status: 'error', msg: 'Item not found.' });
    }
  });

  it('answer 404 in an admin path and 422 in an admin body', async () => {
    for (const id of BEYOND) {
      for (const [path, body] of [
        [`/admin/accounts/${id}/balance`, { amount: '1', reason: 'x' }],
        [`/admin/accounts/${id}/api-key`, {}],
        [`/admin/card-services/${id}/codes`, { codes: ['A'] }],
        [`/admin/card-services/${id}/stock`, undefined],
      ] as const) {
        expect(await expectFailure(await refused(() => admin(path, { body })), 404), path).toBeTypeOf('string');
      }
      expect(await expectFailure(await refused(() => admin('/admin/license/purchases', { body: { item_id: Number(id) } })), 422)).toEqual([
        'The selected item id is invalid.',
      ]);
      const item = { account_id: Number(id), name: 'n', category: 'c', version: '1.0', media_kind: 'image', thumbnail: 't', preview_image: 'p', price_regular: 1, price_extended: 2 };
      expect(await expectFailure(await refused(() => admin('/admin/license/items', { body: item })), 422)).toEqual([
        'The selected account id is invalid.',
      ]);
    }
  });

  it('refuses pages past the range with a message, not a database error', async () => {
    expect(await expectFailure(await api.get('/api/get-card/orders?page=2147483648'), 422)).toEqual([
      'The page field must not be greater than 2147483647.',
    ]);
    expect(await expectFailure(await api.get('/api/top-up/list?page=100000000000000000000'), 422)).toEqual([
      'The page field must not be greater than 2147483647.',
    ]);
    const last = await expectJson(await api.get('/api/get-card/orders?page=2147483647'), 200);
    expect(last.message.data).toEqual([]);
  });
});

const NUL = 'abc\u0000def';
const LONE = 'abc\ud800def';
const TEXT_RULE = 'must not contain NUL characters or unpaired surrogates.';

describe('the text rule (C2): NUL characters and unpaired surrogates', () => {
  it('are a 422 for the field in queries, order forms and reviews', async () => {
    expect(await expectFailure(await refused(() => api.get('/api/top-up/details?slug=%00')), 422)).toEqual([`The slug field ${TEXT_RULE}`]);
    expect(await expectFailure(await refused(() => api.get('/api/top-up/details?slug=a%ED%A0%80')), 404)).toBeTypeOf('string');
    for (const bad of [NUL, LONE]) {
      const order = { topUpId: topUp.id, serviceId: topUp.services[0]!.id, player_id: bad };
      expect(await expectFailure(await refused(() => api.postJson('/api/top-up/make-order', order)), 422)).toEqual([`The Player ID field ${TEXT_RULE}`]);
    }
    expect(
      await expectFailure(await refused(() => api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id), player_id: NUL })), 422),
    ).toEqual([`The Player ID field ${TEXT_RULE}`]);

    await createOrderFor(app.services.db, (await app.services.sql`select id from accounts order by id limit 1`)[0]!.id, { cardId: card.id });
    for (const bad of [NUL, LONE]) {
      expect(await expectFailure(await refused(() => api.postJson('/api/card/review', { card_id: card.id, rating: 4, comment: bad })), 422)).toEqual([
        `The comment field ${TEXT_RULE}`,
      ]);
    }
  });

  it('are a 422 for admin names, notes, reasons and codes, and a 404 for an order number in the path', async () => {
    for (const bad of [NUL, LONE]) {
      expect(await expectFailure(await refused(() => admin('/admin/accounts', { body: { firstname: bad, lastname: 'L' } })), 422)).toEqual([
        `The firstname field ${TEXT_RULE}`,
      ]);
      const { id } = await createTestAccount(app);
      expect(await expectFailure(await refused(() => admin(`/admin/accounts/${id}/balance`, { body: { amount: '5', reason: bad } })), 422)).toEqual([
        `The reason field ${TEXT_RULE}`,
      ]);
      expect(await expectFailure(await refused(() => admin(`/admin/card-services/${card.services[0]!.id}/codes`, { body: { codes: ['OK-1', bad] } })), 422)).toEqual([
        `The codes field ${TEXT_RULE}`,
      ]);
      const item = { account_id: id, name: bad, category: 'c', version: '1.0', media_kind: 'image', thumbnail: 't', preview_image: 'p', price_regular: 1, price_extended: 2 };
      expect(await expectFailure(await refused(() => admin('/admin/license/items', { body: item })), 422)).toEqual([`The name field ${TEXT_RULE}`]);
    }
    const [order] = await app.services.sql<{ utr: string }[]>`select utr from orders limit 1`;
    expect(await expectFailure(await refused(() => admin(`/admin/orders/${order!.utr}/refund`, { body: { reason: NUL } })), 422)).toEqual([
      `The reason field ${TEXT_RULE}`,
    ]);
    expect(await expectFailure(await refused(() => admin(`/admin/orders/${order!.utr}/complete`, { body: { note: LONE } })), 422)).toEqual([
      `The note field ${TEXT_RULE}`,
    ]);
    expect(await expectFailure(await refused(() => admin('/admin/orders/T%00X/refund', { body: { reason: 'x' } })), 404)).toBeTypeOf('string');
  });

  it('is a 422 in the Interface B envelope for a purchase code', async () => {
    const response = await refused(() =>
      app.request('/license-api/purchases/validation', {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ purchase_code: NUL }),
      }),
    );
    const body: Json = await expectJson(response, 422);
    expect(body).toEqual({ status: 'error', msg: expect.stringContaining('without NUL characters') });
  });
});

describe('amounts past the money column (C2)', () => {
  it('an admin credit that would take the balance past numeric(14,2) is a 422 and writes nothing', async () => {
    const { id } = await createTestAccount(app, '1000.00');
    expect(await expectFailure(await refused(() => admin(`/admin/accounts/${id}/balance`, { body: { amount: '999999999999.99', reason: 'x' } })), 422)).toEqual([
      'The amount field must not take the balance above 999999999999.99.',
    ]);
    // Up to the column's maximum is fine.
    expect((await expectJson(await admin(`/admin/accounts/${id}/balance`, { body: { amount: '999999998999.99', reason: 'x' } }), 200)).message).toEqual({
      balance: 999999999999.99,
    });
  });

  it('an order that costs more than any balance can hold is refused as insufficient balance (the debit check fires first)', async () => {
    const pricey = await createCard(app.services.db, { services: [{ price: '999999999999.00' }] });
    const rich = await buyer(app, '999999999999.99');
    expect(await expectFailure(await refused(() => rich.api.postJson('/api/card/make-order', { service_ids: [pricey.services[0]!.id], quantities: [2] })), 409)).toBe(
      'Insufficient balance',
    );
  });
});
