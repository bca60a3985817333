import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, expectFailure, expectJson } from '../helpers/api.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';

/** C24's price guard: `max_price` on either make-order, the most the whole order may cost in the account's currency. */
let app: TestApp;
let writes: () => Promise<number>;
beforeAll(async () => {
  app = await startTestApp();
  writes = (await watchWrites(app.services.sql)).count;
});
afterAll(async () => app?.close());

const balanceOf = async (accountId: number) => (await app.services.sql`select balance from accounts where id = ${accountId}`)[0]!.balance as string;

/** The request `send` makes is refused with `message` and writes nothing at all (claims and reservations included). */
async function refusedWithNothingWritten(send: () => Promise<Response>, message: string | string[], status = 409) {
  const before = await writes();
  expect(await expectFailure(await send(), status)).toEqual(message);
  expect(await writes()).toBe(before);
}

describe('card/make-order with max_price', () => {
  it('places an order costing exactly max_price; a cent less is a 409 naming both figures, nothing written', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '5.00' }, { price: '12.50', discount: '2.50' }] });
    const [a, b] = card.services;
    // 2 × 5.00 + 3 × 10.00 = 40.00
    const order = (maxPrice: unknown) => api.postJson('/api/card/make-order', { service_ids: [a!.id, b!.id], quantities: [2, 3], max_price: maxPrice });

    await refusedWithNothingWritten(() => order('39.99'), 'The order costs 40.00 USD, above max_price 39.99.');
    await refusedWithNothingWritten(() => order(39), 'The order costs 40.00 USD, above max_price 39.00.');
    expect(await balanceOf(keys.id)).toBe('100.00');

    const placed = await expectJson(await order(40), 200);
    const [row] = await app.services.sql`select total from orders where utr = ${placed.message.utr}`;
    expect(row!.total).toBe('40.00');
    expect(await balanceOf(keys.id)).toBe('60.00');
  });

  it('takes max_price from a form body too', async () => {
    const { api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '7.25' }] });
    const form = (maxPrice: string) => api.postForm('/api/card/make-order', { 'service_ids[]': [String(card.services[0]!.id)], 'quantities[]': ['2'], max_price: maxPrice });
    await refusedWithNothingWritten(() => form('14.49'), 'The order costs 14.50 USD, above max_price 14.49.');
    await expectJson(await form('14.5'), 200);
  });

  it('counts campaign units at the campaign price, and a refused order reserves none of them', async () => {
    const { api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    await createCampaign(app.services.db, { cardServices: [{ serviceId: service.id, price: '6.00', discount: '1.00', maxSell: 2 }] });
    // Two campaign units at 5.00 and one at the regular 10.00: 20.00.
    const order = (maxPrice: string) => api.postJson('/api/card/make-order', { service_ids: [service.id], quantities: [3], max_price: maxPrice });
    await refusedWithNothingWritten(() => order('19.99'), 'The order costs 20.00 USD, above max_price 19.99.');
    expect((await app.services.sql`select offered_sell from card_services where id = ${service.id}`)[0]!.offered_sell).toBe(0);
    await expectJson(await order('20.00'), 200);
    expect((await app.services.sql`select offered_sell from card_services where id = ${service.id}`)[0]!.offered_sell).toBe(2);
  });

  it('is refused before the balance: an order both dearer than max_price and than the balance names the price', async () => {
    const { api } = await buyer(app, '1.00');
    const card = await createCard(app.services.db, { services: [{ price: '5.00' }] });
    await refusedWithNothingWritten(
      () => api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1], max_price: '4.00' }),
      'The order costs 5.00 USD, above max_price 4.00.',
    );
  });
});

describe('top-up/make-order with max_price', () => {
  it('refuses a dearer top-up from a JSON or form body, and places it within the limit', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const topUp = await createTopUp(app.services.db, { services: [{ price: '20.00', discount: '10', discountType: 'percentage' }] });
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id, User_Id: '5123456789' };
    await refusedWithNothingWritten(() => api.postJson('/api/top-up/make-order', { ...body, max_price: 17.99 }), 'The order costs 18.00 USD, above max_price 17.99.');
    await refusedWithNothingWritten(
      () => api.postForm('/api/top-up/make-order', { ...Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])), max_price: '17' }),
      'The order costs 18.00 USD, above max_price 17.00.',
    );
    const placed = await expectJson(await api.postJson('/api/top-up/make-order', { ...body, max_price: '18.00' }), 200);
    expect(placed.message).toMatch(/^Order placed successfully/);
    expect(await balanceOf(keys.id)).toBe('82.00');
  });
});

describe('max_price and the Idempotency-Key (C15)', () => {
  it('a refusal claims no key: the same key with a higher max_price places the order, once', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const headers = { 'Idempotency-Key': 'guarded-1' };
    const order = (maxPrice: string) => api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1], max_price: maxPrice }, headers);
    await refusedWithNothingWritten(() => order('9.99'), 'The order costs 10.00 USD, above max_price 9.99.');
    const first = await expectJson(await order('10.00'), 200);
    // The same request again is the same order; another limit under the same key is another request.
    expect((await expectJson(await order('10.00'), 200)).message.utr).toBe(first.message.utr);
    expect((await expectJson(await order('10'), 200)).message.utr).toBe(first.message.utr);
    expect(await expectFailure(await order('11.00'), 409)).toBe('This Idempotency-Key was used with a different request.');
    expect(await balanceOf(keys.id)).toBe('90.00');
  });
});

describe('max_price validation', () => {
  it.each([
    ['abc', 'must be a number with at most 2 decimals.'],
    ['-1', 'must be a number with at most 2 decimals.'],
    ['1.234', 'must be a number with at most 2 decimals.'],
    [true, 'must be a number with at most 2 decimals.'],
    [{}, 'must be a number with at most 2 decimals.'],
    // A blank value is refused as every blank field is (C4), never read as "no limit".
    ['', 'is required.'],
  ])('%j is a 422 naming the field, nothing written', async (maxPrice, problem) => {
    const { api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    await refusedWithNothingWritten(
      () => api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1], max_price: maxPrice }),
      [`The max price field ${problem}`],
      422,
    );
  });
});
