import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customer as signedInCustomer, expectFailure, expectJson, type PastOrder } from '../helpers/api.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const customer = (orders: PastOrder[] = []) => signedInCustomer(app, orders);

const reviewCount = async (kind: string, id: number) =>
  Number((await app.services.sql`select count(*) as n from reviews where reviewable_type = ${kind} and reviewable_id = ${id}`)[0]!.n);

describe('validation (422) before business rules', () => {
  it('names every failing field of a top-up review (C4)', async () => {
    const { api } = await customer();
    expect(await expectFailure(await api.postJson('/api/topup/review', {}), 422)).toEqual([
      'The top up id field is required.',
      'The rating field is required.',
      'The comment field is required.',
    ]);
    expect(await expectFailure(await api.postJson('/api/topup/review', { topUpId: 'x', rating: 6, comment: '  ' }), 422)).toEqual([
      'The top up id field must be a positive integer.',
      'The rating field must be between 1 and 5.',
      'The comment field is required.',
    ]);
    const topUp = await createTopUp(app.services.db);
    expect(await expectFailure(await api.postForm('/api/topup/review', { topUpId: String(topUp.id), rating: '0', comment: 'ok' }), 422)).toEqual([
      'The rating field must be between 1 and 5.',
    ]);
    // A product id of the right form that names no product fails too, in the same answer (spec §7.3).
    expect(await expectFailure(await api.postForm('/api/topup/review', { topUpId: '999999', rating: '0', comment: 'ok' }), 422)).toEqual([
      'The rating field must be between 1 and 5.',
      'The selected top up id is invalid.',
    ]);
  });

  it('names every failing field of a card review', async () => {
    const { api } = await customer();
    expect(await expectFailure(await api.postForm('/api/card/review', { rating: 'five' }), 422)).toEqual([
      'The card id field is required.',
      'The rating field must be between 1 and 5.',
      'The comment field is required.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/review', { card_id: 999999, comment: 'ok' }), 422)).toEqual([
      'The rating field is required.',
      'The selected card id is invalid.',
    ]);
  });

  it('refuses unknown or inactive product ids in the body with 422, even without an order', async () => {
    const hidden = await createTopUp(app.services.db, { status: 0 });
    const { api } = await customer([{ topUpId: hidden.id }]);
    for (const id of [999999, hidden.id]) {
      expect(await expectFailure(await api.postJson('/api/topup/review', { topUpId: id, rating: 5, comment: 'x' }), 422)).toEqual([
        'The selected top up id is invalid.',
      ]);
    }
    expect(await expectFailure(await api.postJson('/api/card/review', { card_id: 999999, rating: 5, comment: 'x' }), 422)).toEqual([
      'The selected card id is invalid.',
    ]);
    expect(await reviewCount('top_up', hidden.id)).toBe(0);
  });

  it('answers 400 for an unreadable body', async () => {
    const { token } = await customer();
    const response = await app.request('/api/topup/review', {
      method: 'POST',
      headers: { Authorization: token, 'Content-Type': 'application/json' },
      body: '{"topUpId":',
    });
    await expectFailure(response, 400);
  });

  it('validates review list queries and answers 404 for unknown products', async () => {
    const { api } = await customer();
    expect(await expectFailure(await api.get('/api/topup/review'), 422)).toEqual(['The top up id field is required.']);
    expect(await expectFailure(await api.get('/api/card/review?card_id=abc'), 422)).toEqual(['The card id field must be a positive integer.']);
    expect(await expectFailure(await api.get('/api/topup/review?top_up_id=1&page=0'), 422)).toEqual(['The page field must be a positive integer.']);
    expect(await expectFailure(await api.get('/api/topup/review?top_up_id=999999'), 404)).toBe('No top-up with id 999999.');
    expect(await expectFailure(await api.get('/api/card/review?card_id=999999'), 404)).toBe('No card with id 999999.');
  });
});

describe('business rules (409, C10)', () => {
  it('refuses a review from an account that never ordered the product, or whose order was refunded', async () => {
    const topUp = await createTopUp(app.services.db);
    const card = await createCard(app.services.db);
    const never = await customer();
    const refunded = await customer([{ topUpId: topUp.id, status: 2 }, { cardId: card.id, status: 2 }]);
    for (const who of [never, refunded]) {
      expect(await expectFailure(await who.api.postJson('/api/topup/review', { topUpId: topUp.id, rating: 5, comment: 'x' }), 409)).toBe(
        'Only customers who ordered this product can review it.',
      );
      await expectFailure(await who.api.postJson('/api/card/review', { card_id: card.id, rating: 5, comment: 'x' }), 409);
    }
    expect(await reviewCount('top_up', topUp.id)).toBe(0);
    expect(await reviewCount('card', card.id)).toBe(0);
  });

  it('accepts orders still running or short of stock', async () => {
    const card = await createCard(app.services.db);
    const pending = await customer([{ cardId: card.id, status: 0 }]);
    const short = await customer([{ cardId: card.id, status: 3 }]);
    for (const who of [pending, short]) {
      await expectJson(await who.api.postJson('/api/card/review', { card_id: card.id, rating: 4, comment: 'ok' }), 200);
    }
  });

  it('allows one review per account and product, also under concurrent submissions', async () => {
    const topUp = await createTopUp(app.services.db);
    const { api } = await customer([{ topUpId: topUp.id }]);
    const send = (i: number) => api.postJson('/api/topup/review', { topUpId: topUp.id, rating: 3, comment: `attempt ${i}` });
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of responses.filter((x) => x.status === 409)) expect(await expectFailure(r, 409)).toBe('You have already reviewed this product.');
    expect(await expectFailure(await send(7), 409)).toBe('You have already reviewed this product.');
    expect(await reviewCount('top_up', topUp.id)).toBe(1);
    const [row] = await app.services.sql`select total_review, avg_rating from top_ups where id = ${topUp.id}`;
    expect(row).toEqual({ total_review: 1, avg_rating: '3.00' });
  });

  it('keeps counts exact when many accounts review at once', async () => {
    const card = await createCard(app.services.db);
    const buyers = await Promise.all(Array.from({ length: 8 }, () => customer([{ cardId: card.id }])));
    const responses = await Promise.all(
      buyers.map((b, i) => b.api.postJson('/api/card/review', { card_id: card.id, rating: (i % 5) + 1, comment: 'race' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    const [row] = await app.services.sql`select total_review, avg_rating from cards where id = ${card.id}`;
    // Ratings 1,2,3,4,5,1,2,3 → 21 / 8 = 2.625 → 2.63
    expect(row).toEqual({ total_review: 8, avg_rating: '2.63' });
  });
});

describe('security', () => {
  it('refuses review endpoints without a valid token', async () => {
    for (const [method, path] of [
      ['GET', '/api/topup/review?top_up_id=1'],
      ['GET', '/api/card/review?card_id=1'],
      ['POST', '/api/topup/review'],
      ['POST', '/api/card/review'],
    ] as const) {
      const response = await app.request(path, {
        method,
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer wrong' },
        ...(method === 'POST' ? { body: JSON.stringify({ topUpId: 1, card_id: 1, rating: 5, comment: 'x' }) } : {}),
      });
      expect(await expectFailure(response, 401)).toBe('Unauthenticated.');
    }
  });

  it('always reviews as the caller: another account’s order does not qualify and body account ids are ignored', async () => {
    const topUp = await createTopUp(app.services.db);
    const buyer = await customer([{ topUpId: topUp.id }]);
    const intruder = await customer();
    await expectFailure(
      await intruder.api.postJson('/api/topup/review', { topUpId: topUp.id, rating: 1, comment: 'fake', user_id: buyer.id, account_id: buyer.id }),
      409,
    );
    await expectJson(
      await buyer.api.postJson('/api/topup/review', { topUpId: topUp.id, rating: 5, comment: 'mine', user_id: intruder.id, account_id: intruder.id }),
      200,
    );
    const rows = await app.services.sql`select account_id from reviews where reviewable_type = 'top_up' and reviewable_id = ${topUp.id}`;
    expect(rows.map((r) => r.account_id)).toEqual([buyer.id]);
  });
});
