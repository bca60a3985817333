import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, customer as signedInCustomer, expectJson, ISO_MICROS, type Json, type PastOrder } from '../helpers/api.js';
import { createCard, createReview, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { ABSOLUTE_URL, expectKeys, REVIEW_KEYS, REVIEW_PAGINATION_KEYS, REVIEW_USER_KEYS } from '../catalog/shapes.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const customer = (name: string, orders: PastOrder[] = []) => signedInCustomer(app, orders, name);

describe('A7 topup/review and A13 card/review lists', () => {
  it('lists published top-up reviews newest first, 15 per page, with absolute page URLs', async () => {
    const { db } = app.services;
    const topUp = await createTopUp(db);
    const authors: number[] = [];
    for (let i = 0; i < 18; i++) {
      const keys = await createTestAccount(app, '0', `Author${i}`);
      authors.push(keys.id);
      await createReview(db, { accountId: keys.id, kind: 'top_up', productId: topUp.id, rating: 4, comment: `Comment ${i}`, status: i === 17 ? 0 : 1 });
    }
    const { api } = await customer('Reader');
    const base = `${app.baseUrl}/api/topup/review`;

    const first = (await expectJson(await api.get(`/api/topup/review?top_up_id=${topUp.id}`), 200)).message;
    expectKeys(first, ['reviews', 'pagination']);
    expectKeys(first.pagination, REVIEW_PAGINATION_KEYS);
    expect(first.pagination).toEqual({
      total: 17,
      per_page: 15,
      current_page: 1,
      last_page: 2,
      next_page_url: `${base}?top_up_id=${topUp.id}&page=2`,
      prev_page_url: null,
    });
    expect(first.reviews).toHaveLength(15);
    expect(first.reviews[0].comment).toBe('Comment 16');
    const [review] = first.reviews as Json[];
    expectKeys(review!, REVIEW_KEYS);
    expectKeys(review!.user, REVIEW_USER_KEYS);
    expect(review).toMatchObject({ rating: 4, status: 1 });
    expect(review!.created_at).toMatch(ISO_MICROS);
    expect(review!.updated_at).toMatch(ISO_MICROS);
    expect(review!.user).toMatchObject({ id: authors[16], firstname: 'Author16', lastname: 'Account', fullname: 'Author16 Account', image: null, LastSeenActivity: false });
    expect(review!.user.imgPath).toMatch(ABSOLUTE_URL);

    const second = (await expectJson(await api.get(`/api/topup/review?top_up_id=${topUp.id}&page=2`), 200)).message;
    expect(second.reviews.map((r: Json) => r.comment)).toEqual(['Comment 1', 'Comment 0']);
    expect(second.pagination).toMatchObject({ current_page: 2, next_page_url: null, prev_page_url: `${base}?top_up_id=${topUp.id}&page=1` });
  });

  it('lists card reviews with the reviewer id', async () => {
    const { db } = app.services;
    const card = await createCard(db);
    const author = await createTestAccount(app, '0', 'Carder');
    await createReview(db, { accountId: author.id, kind: 'card', productId: card.id, rating: 3, comment: 'Fine.' });
    const { api } = await customer('Reader');
    const body = (await expectJson(await api.get(`/api/card/review?card_id=${card.id}`), 200)).message;
    expect(body.reviews).toHaveLength(1);
    expectKeys(body.reviews[0], [...REVIEW_KEYS, 'user_id']);
    expect(body.reviews[0]).toMatchObject({ user_id: author.id, rating: 3, comment: 'Fine.', user: { id: author.id } });
    expect(body.pagination).toMatchObject({ total: 1, last_page: 1, next_page_url: null, prev_page_url: null });
  });
});

describe('A8 POST topup/review and A14 POST card/review', () => {
  it('publishes a top-up review from a form body and updates the product ratings', async () => {
    const topUp = await createTopUp(app.services.db);
    const alice = await customer('Alice', [{ topUpId: topUp.id }]);
    const bob = await customer('Bob', [{ topUpId: topUp.id }]);
    // Read once before: the details' review list is cached, and a submitted review must show at once anyway.
    const before = (await expectJson(await alice.api.get(`/api/top-up/details?slug=${topUp.slug}`), 200)).message;
    expect(before.reviewStatic.reviews).toEqual([]);

    const sent = await expectJson(await alice.api.postForm('/api/topup/review', { topUpId: String(topUp.id), rating: '5', comment: 'Instant!' }), 200);
    expect(sent).toEqual({ status: 'success', message: 'Review submitted successfully.' });
    await expectJson(await bob.api.postJson('/api/topup/review', { topUpId: topUp.id, rating: 2, comment: 'Slow.' }), 200);

    const [row] = await app.services.sql`select total_review, avg_rating from top_ups where id = ${topUp.id}`;
    expect(row).toEqual({ total_review: 2, avg_rating: '3.50' });
    const list = (await expectJson(await alice.api.get(`/api/topup/review?top_up_id=${topUp.id}`), 200)).message;
    expect(list.reviews.map((r: Json) => [r.user.id, r.rating, r.comment, r.status])).toEqual([
      [bob.id, 2, 'Slow.', 1],
      [alice.id, 5, 'Instant!', 1],
    ]);
    const details = (await expectJson(await alice.api.get(`/api/top-up/details?slug=${topUp.slug}`), 200)).message;
    expect(details.topUp).toMatchObject({ total_review: 2, avg_rating: 3.5 });
    expect(details.reviewStatic.reviews.map((r: Json) => r.comment)).toEqual(['Slow.', 'Instant!']);
    expect(details.reviewStatic.hasAlreadyOrdered).toBe(true);
  });

  it('publishes a card review from a multipart body and updates the card ratings', async () => {
    const card = await createCard(app.services.db);
    const carol = await customer('Carol', [{ cardId: card.id }]);
    const form = new FormData();
    form.set('card_id', String(card.id));
    form.set('rating', '4.5');
    form.set('comment', 'Code worked.');
    const response = await app.request('/api/card/review', { method: 'POST', headers: { Authorization: carol.token }, body: form });
    expect(await expectJson(response, 200)).toEqual({ status: 'success', message: 'Review submitted successfully.' });
    const details = (await expectJson(await carol.api.get(`/api/card/details?card_id=${card.id}`), 200)).message.card;
    expect(details).toMatchObject({ total_review: 1, avg_rating: 4.5 });
  });
});
