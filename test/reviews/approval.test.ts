import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestAccount, expectFailure, expectJson, tokenFor } from '../helpers/api.js';
import { createCard, createOrderFor } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { REVIEWS_REQUIRE_APPROVAL: 'true' } });
});
afterAll(async () => app?.close());

describe('REVIEWS_REQUIRE_APPROVAL=true (C10)', () => {
  it('holds new reviews: stored with status 0, not listed, not counted, still one per account', async () => {
    const card = await createCard(app.services.db);
    const keys = await createTestAccount(app);
    await createOrderFor(app.services.db, keys.id, { cardId: card.id, status: 1 });
    const api = client(app, await tokenFor(app, keys));

    const body = { card_id: card.id, rating: 5, comment: 'Awaiting approval' };
    expect(await expectJson(await api.postJson('/api/card/review', body), 200)).toEqual({
      status: 'success',
      message: 'Review submitted successfully.',
    });
    const rows = await app.services.sql`select status, account_id from reviews where reviewable_type = 'card' and reviewable_id = ${card.id}`;
    expect(rows).toEqual([{ status: 0, account_id: keys.id }]);

    const list = (await expectJson(await api.get(`/api/card/review?card_id=${card.id}`), 200)).message;
    expect(list.reviews).toEqual([]);
    expect(list.pagination.total).toBe(0);
    const details = (await expectJson(await api.get(`/api/card/details?card_id=${card.id}`), 200)).message.card;
    expect(details).toMatchObject({ total_review: 0, avg_rating: 0 });

    await expectFailure(await api.postJson('/api/card/review', body), 409);
  });
});
