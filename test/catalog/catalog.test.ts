import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OrderField } from '../../src/db/schema.js';
import { createAccount } from '../../src/modules/accounts/service.js';
import { ORDER_STATUS, transitionOrder } from '../../src/modules/order-state/state.js';
import { client, createTestAccount, expectJson, ISO_MICROS, tokenFor, type Json } from '../helpers/api.js';
import { createCard, createCategory, createGateway, createOrderFor, createReview, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  ABSOLUTE_URL,
  CARD_DETAIL_KEYS,
  CARD_KEYS,
  CARD_SERVICE_KEYS,
  CATEGORY_KEYS,
  EXTENDED_SERVICE_KEYS,
  expectKeys,
  GATEWAY_KEYS,
  PAGE_KEYS,
  RECEIVABLE_CURRENCY_KEYS,
  REVIEW_KEYS,
  REVIEW_USER_KEYS,
  TOP_UP_KEYS,
  TOP_UP_SERVICE_KEYS,
} from './shapes.js';

const ORDER_FIELDS: OrderField[] = [
  { field_value: 'Player ID', field_name: 'player_id', field_placeholder: 'Enter your player ID', field_note: 'Found in your profile', field_type: 'text' },
  {
    field_value: 'Server',
    field_name: 'server',
    field_placeholder: 'Choose a server',
    field_note: 'Where your character lives',
    field_type: 'select',
    option: { asia: 'Asia', europe: 'Europe' },
  },
];

let app: TestApp;
let api: ReturnType<typeof client>;
let accountId: number;
let topUpCategory: { id: number };
let cardCategory: { id: number };
let game: Awaited<ReturnType<typeof createTopUp>>;
let plain: Awaited<ReturnType<typeof createTopUp>>;
let card: Awaited<ReturnType<typeof createCard>>;
let gateway: Awaited<ReturnType<typeof createGateway>>;

beforeAll(async () => {
  app = await startTestApp();
  const { db } = app.services;
  const keys = await createTestAccount(app);
  accountId = keys.id;
  api = client(app, await tokenFor(app, keys));

  topUpCategory = await createCategory(db, { type: 'top_up', name: 'Mobile games', icon: 'fas fa-mobile' });
  cardCategory = await createCategory(db, { type: 'card', name: 'Gift cards', icon: 'fas fa-gift' });
  await createCategory(db, { type: 'card', name: 'Hidden', status: 0 });
  game = await createTopUp(db, {
    categoryId: topUpCategory.id,
    name: 'PUBG Mobile',
    slug: 'pubg-mobile',
    note: 'Asia servers only',
    orderFields: ORDER_FIELDS,
    services: [
      { name: '60 UC', price: '9.99', discount: '1.50', discountType: 'flat' },
      { name: '325 UC', price: '100.00', discount: '10', discountType: 'percentage' },
      { name: 'Retired pack', price: '5.00', status: 0 },
    ],
  });
  plain = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'plain-game', services: [{ price: '1.00' }] });
  await createTopUp(db, { categoryId: topUpCategory.id, slug: 'inactive-game', status: 0 });
  await createTopUp(db, { categoryId: topUpCategory.id, slug: 'deleted-game', deletedAt: '2026-01-01 00:00:00+00' });
  card = await createCard(db, {
    categoryId: cardCategory.id,
    name: 'Steam Wallet',
    slug: 'steam-wallet',
    sellCount: 42,
    trending: 1,
    services: [{ name: '$10', price: '10.00' }, { name: '$20', price: '20.00', discount: '5', discountType: 'percentage' }, { name: 'Old', status: 0 }],
  });
  await createCard(db, { categoryId: cardCategory.id, slug: 'inactive-card', status: 0 });
  gateway = await createGateway(db, { code: 'balance', name: 'Account balance' });
  await createGateway(db, { code: 'disabled', status: 0 });
});
afterAll(async () => app?.close());

function expectService(json: Json, keys: string[]) {
  expectKeys(json, keys);
  expect(typeof json.price).toBe('number');
  expect(typeof json.discount).toBe('number');
  expect(json.created_at).toMatch(ISO_MICROS);
  expect(json.updated_at).toMatch(ISO_MICROS);
  expect(json.image_path).toMatch(ABSOLUTE_URL);
  expect(json.image_path.endsWith(`/${json.image}`)).toBe(true);
  expect(json.old_data).toBeNull();
  expect(json.campaign_data).toBeNull();
  expect(json.is_offered).toBe(0);
}

describe('A2 get-category', () => {
  it('lists active categories with their number of active, non-deleted products', async () => {
    const body = await expectJson(await api.get('/api/get-category'), 200);
    expect(body.status).toBe('success');
    expectKeys(body.message, ['categories']);
    expect(body.message.categories).toEqual([
      { id: topUpCategory.id, name: 'Mobile games', icon: 'fas fa-mobile', type: 'top_up', active_children: 2 },
      { id: cardCategory.id, name: 'Gift cards', icon: 'fas fa-gift', type: 'card', active_children: 1 },
    ]);
    for (const category of body.message.categories) expectKeys(category, CATEGORY_KEYS);
  });
});

describe('A3 top-up/list', () => {
  it('returns a page object of live top-ups with every field and their active services', async () => {
    const body = await expectJson(await api.get('/api/top-up/list'), 200);
    const page = body.message;
    expectKeys(page, PAGE_KEYS);
    expect(page.items.map((t: Json) => t.slug)).toEqual(['pubg-mobile', 'plain-game']);
    const [item] = page.items;
    expectKeys(item, [...TOP_UP_KEYS, 'services']);
    expect(item).toMatchObject({
      id: game.id,
      category_id: topUpCategory.id,
      name: 'PUBG Mobile',
      slug: 'pubg-mobile',
      region: 'Global',
      note: 'Asia servers only',
      status: 1,
      instant_delivery: 1,
      image: {
        image: 'topups/pubg-mobile.webp',
        image_driver: 'local',
        preview: 'topups/pubg-mobile-preview.webp',
        preview_driver: 'local',
      },
      description: game.description,
      guide: game.guide,
      total_review: 0,
      avg_rating: 0,
      sort_by: 1,
      deleted_at: null,
      order_information: { '1': ORDER_FIELDS[0], '2': ORDER_FIELDS[1] },
    });
    expect(item.preview_image).toBe(`${app.baseUrl}/assets/topups/pubg-mobile-preview.webp`);
    expect(item.top_up_detail_route).toBe(`${app.baseUrl}/api/top-up/details?slug=pubg-mobile`);
    expect(item.created_at).toMatch(ISO_MICROS);
    expect(item.updated_at).toMatch(ISO_MICROS);
    expect(item.services.map((s: Json) => s.name)).toEqual(['60 UC', '325 UC']);
    for (const service of item.services) expectService(service, TOP_UP_SERVICE_KEYS);
    expect(item.services[0]).toMatchObject({
      id: game.services[0]!.id,
      top_up_id: game.id,
      price: 9.99,
      discount: 1.5,
      discount_type: 'flat',
      status: 1,
      offered_sell: 0,
      max_sell: 0,
      image_driver: 'local',
    });
    expect(page.items[1].order_information).toEqual({});
  });

  it('filters by category', async () => {
    const other = await createCategory(app.services.db, { type: 'top_up' });
    await createTopUp(app.services.db, { categoryId: other.id, slug: 'other-category-game' });
    const body = await expectJson(await api.get(`/api/top-up/list?category_id=${other.id}`), 200);
    expect(body.message.items.map((t: Json) => t.slug)).toEqual(['other-category-game']);
    expect(body.message.total).toBe(1);
  });

  it('paginates 10 per page with absolute page URLs, and honours per_page', async () => {
    const category = await createCategory(app.services.db, { type: 'top_up' });
    for (let i = 0; i < 12; i++) await createTopUp(app.services.db, { categoryId: category.id, slug: `paged-${String(i).padStart(2, '0')}` });
    const base = `${app.baseUrl}/api/top-up/list`;

    const first = (await expectJson(await api.get(`/api/top-up/list?category_id=${category.id}`), 200)).message;
    expect(first).toMatchObject({ current_page: 1, from: 1, to: 10, total: 12, per_page: 10, last_page: 2, prev_page_url: null, path: base });
    expect(first.items).toHaveLength(10);
    expect(first.next_page_url).toBe(`${base}?category_id=${category.id}&page=2`);
    expect(first.first_page_url).toBe(`${base}?category_id=${category.id}&page=1`);
    expect(first.last_page_url).toBe(`${base}?category_id=${category.id}&page=2`);
    expect(first.links.map((l: Json) => [l.label, l.active])).toEqual([
      ['&laquo; Previous', false],
      ['1', true],
      ['2', false],
      ['Next &raquo;', false],
    ]);

    const second = (await expectJson(await api.get(`/api/top-up/list?category_id=${category.id}&page=2`), 200)).message;
    expect(second).toMatchObject({ current_page: 2, from: 11, to: 12, next_page_url: null });
    expect(second.items.map((t: Json) => t.slug)).toEqual(['paged-10', 'paged-11']);
    expect(second.prev_page_url).toBe(`${base}?category_id=${category.id}&page=1`);

    const small = (await expectJson(await api.get(`/api/top-up/list?category_id=${category.id}&per_page=5&page=3`), 200)).message;
    expect(small).toMatchObject({ per_page: 5, last_page: 3, current_page: 3, from: 11, to: 12 });
    expect(small.first_page_url).toBe(`${base}?category_id=${category.id}&per_page=5&page=1`);

    const capped = (await expectJson(await api.get(`/api/top-up/list?per_page=500`), 200)).message;
    expect(capped.per_page).toBe(100);

    const beyond = (await expectJson(await api.get(`/api/top-up/list?category_id=${category.id}&page=9`), 200)).message;
    expect(beyond).toMatchObject({ items: [], from: null, to: null, total: 12 });
  });
});

describe('A4 top-up/details', () => {
  it('returns the top-up with extended active services, reviews and gateways', async () => {
    const body = await expectJson(await api.get('/api/top-up/details?slug=pubg-mobile'), 200);
    expectKeys(body.message, ['topUp', 'reviewStatic', 'gateways']);
    const { topUp, reviewStatic, gateways } = body.message;
    expectKeys(topUp, [...TOP_UP_KEYS, 'active_services']);
    expect(topUp.order_information).toEqual(ORDER_FIELDS);
    expect(topUp).toMatchObject({ id: game.id, slug: 'pubg-mobile', deleted_at: null, top_up_detail_route: `${app.baseUrl}/api/top-up/details?slug=pubg-mobile` });
    expect(topUp.active_services).toHaveLength(2);
    for (const service of topUp.active_services) expectService(service, EXTENDED_SERVICE_KEYS);
    expect(topUp.active_services[0]).toMatchObject({
      price: 9.99,
      currency: 'USD',
      currency_symbol: '$',
      discountedAmount: 1.5,
      discountedPriceWithoutDiscount: 8.49,
    });
    expect(topUp.active_services[1]).toMatchObject({ price: 100, discount: 10, discount_type: 'percentage', discountedAmount: 10, discountedPriceWithoutDiscount: 90 });
    expect(reviewStatic).toEqual({ reviews: [], hasAlreadyOrdered: false });

    expect(gateways).toHaveLength(1);
    const [g] = gateways;
    expectKeys(g, GATEWAY_KEYS);
    expect(g).toMatchObject({
      id: gateway.id,
      code: 'balance',
      name: 'Account balance',
      sort_by: 1,
      image: `${app.baseUrl}/assets/gateways/balance.webp`,
      driver: 'local',
      status: 1,
      parameters: { merchant_name: 'Demo Store' },
      currencies: { '0': { USD: 'USD', EUR: 'EUR' } },
      extra_parameters: null,
      supported_currency: ['USD', 'EUR'],
      description: 'Pay with your balance.',
      currency_type: 1,
      is_sandbox: 0,
      environment: 'live',
      is_manual: null,
      note: null,
    });
    expect(g.created_at).toMatch(ISO_MICROS);
    for (const currency of g.receivable_currencies) {
      expectKeys(currency, RECEIVABLE_CURRENCY_KEYS);
      for (const value of Object.values(currency)) expect(typeof value).toBe('string');
    }
  });

  it('shows a top-up without order fields with an empty order_information array', async () => {
    const body = await expectJson(await api.get('/api/top-up/details?slug=plain-game'), 200);
    expect(body.message.topUp.order_information).toEqual([]);
    expect(body.message.topUp.id).toBe(plain.id);
  });

  it('lists the first 15 published reviews newest first, with masked reviewer emails', async () => {
    const { db, sql } = app.services;
    const reviewed = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'reviewed-game' });
    const reviewers = [];
    for (let i = 0; i < 17; i++) {
      const keys = await createTestAccount(app, '0', `Reviewer${i}`);
      reviewers.push(keys.id);
      await createReview(db, { accountId: keys.id, kind: 'top_up', productId: reviewed.id, rating: (i % 5) + 1, comment: `Review ${i}`, status: i === 16 ? 0 : 1 });
    }
    await sql`update accounts set last_seen_at = now() where id = ${reviewers[15]!}`;
    await sql`update accounts set last_seen_at = now() - interval '10 minutes' where id = ${reviewers[14]!}`;

    const body = await expectJson(await api.get('/api/top-up/details?slug=reviewed-game'), 200);
    const { reviews } = body.message.reviewStatic;
    expect(reviews).toHaveLength(15);
    expect(reviews.map((r: Json) => r.comment)).toEqual(Array.from({ length: 15 }, (_, i) => `Review ${15 - i}`));
    const [newest, second] = reviews;
    expectKeys(newest, [...REVIEW_KEYS, 'user_id', 'reviewable_type', 'reviewable_id']);
    expectKeys(newest.user, [...REVIEW_USER_KEYS, 'email']);
    expect(newest).toMatchObject({ user_id: reviewers[15], reviewable_type: 'top_up', reviewable_id: reviewed.id, rating: 1, status: 1 });
    expect(newest.created_at).toMatch(ISO_MICROS);
    expect(newest.user).toMatchObject({
      id: reviewers[15],
      firstname: 'Reviewer15',
      lastname: 'Account',
      image: null,
      image_driver: 'local',
      fullname: 'Reviewer15 Account',
      LastSeenActivity: true,
    });
    expect(newest.user.email).toMatch(/^r\*\*\*@example\.com$/);
    expect(newest.user.imgPath).toMatch(ABSOLUTE_URL);
    expect(second.user.LastSeenActivity).toBe(false);
  });

  it('reports hasAlreadyOrdered for a non-refunded order of the caller only', async () => {
    const { db } = app.services;
    const target = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'ordered-game' });
    const hasOrdered = async () =>
      (await expectJson(await api.get('/api/top-up/details?slug=ordered-game'), 200)).message.reviewStatic.hasAlreadyOrdered;

    const stranger = await createTestAccount(app);
    await createOrderFor(db, stranger.id, { topUpId: target.id, status: 1 });
    expect(await hasOrdered()).toBe(false);
    await createOrderFor(db, accountId, { topUpId: target.id, status: 2 });
    expect(await hasOrdered()).toBe(false);
    await createOrderFor(db, accountId, { topUpId: target.id, status: 0 });
    expect(await hasOrdered()).toBe(true);
  });

  it('answers hasAlreadyOrdered as it is now: a refund makes it false at once, a completed order true for good', async () => {
    const { db } = app.services;
    const target = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'refunded-game' });
    const keys = await createTestAccount(app, '100.00', 'Refunded');
    const buyer = client(app, await tokenFor(app, keys));
    const hasOrdered = async (as = buyer) =>
      (await expectJson(await as.get('/api/top-up/details?slug=refunded-game'), 200)).message.reviewStatic.hasAlreadyOrdered;
    const order = async () => {
      await expectJson(await buyer.postJson('/api/top-up/make-order', { topUpId: target.id, serviceId: target.services[0]!.id }), 200);
      const [row] = await app.services.sql`select id from orders where account_id = ${keys.id} and top_up_id = ${target.id} order by id desc limit 1`;
      return Number(row!.id);
    };

    expect(await hasOrdered()).toBe(false);
    const first = await order();
    expect(await hasOrdered()).toBe(true);
    // The answer was true a moment ago; the refund of the only order makes it false on the next read.
    expect(await transitionOrder(db, first, ORDER_STATUS.refund)).not.toBeNull();
    expect(await hasOrdered()).toBe(false);
    const second = await order();
    expect(await hasOrdered()).toBe(true);
    // Waiting for stock, then refunded: false again.
    await transitionOrder(db, second, ORDER_STATUS.stock_short);
    expect(await hasOrdered()).toBe(true);
    await transitionOrder(db, second, ORDER_STATUS.refund);
    expect(await hasOrdered()).toBe(false);
    // A completed order can no longer be refunded: the answer stays true, also when a later order is refunded.
    const third = await order();
    await transitionOrder(db, third, ORDER_STATUS.completed);
    expect(await hasOrdered()).toBe(true);
    const fourth = await order();
    await transitionOrder(db, fourth, ORDER_STATUS.refund);
    expect(await hasOrdered()).toBe(true);
    expect(await transitionOrder(db, third, ORDER_STATUS.refund)).toBeNull();
    // Settled: the process no longer reads it.
    const statements = vi.spyOn(app.services.sql, 'unsafe');
    try {
      expect(await hasOrdered()).toBe(true);
      expect(statements.mock.calls.filter(([text]) => /\borders\b/.test(String(text)))).toEqual([]);
    } finally {
      statements.mockRestore();
    }
    // Nobody else's answer moved with it.
    expect(await hasOrdered(api)).toBe(false);
  });

  it('reads the hasAlreadyOrdered of concurrent callers together, each caller getting its own answer', async () => {
    const { db } = app.services;
    const target = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'crowded-game' });
    const callers = await Promise.all(Array.from({ length: 24 }, (_, i) => createTestAccount(app, '0.00', `Crowd ${i}`)));
    // Every third caller has an order in progress, every third a refunded one, the rest none.
    for (const [i, caller] of callers.entries()) if (i % 3 < 2) await createOrderFor(db, caller.id, { topUpId: target.id, status: i % 3 === 0 ? 0 : 2 });
    const apis = await Promise.all(callers.map(async (caller) => client(app, await tokenFor(app, caller))));
    const statements = vi.spyOn(app.services.sql, 'unsafe');
    try {
      const answers = await Promise.all(
        apis.map(async (as) => (await expectJson(await as.get('/api/top-up/details?slug=crowded-game'), 200)).message.reviewStatic.hasAlreadyOrdered),
      );
      expect(answers).toEqual(callers.map((_, i) => i % 3 === 0));
      const reads = statements.mock.calls.filter(([text]) => /\bunnest\b/.test(String(text)) && /\borders\b/.test(String(text)));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.length).toBeLessThan(callers.length);
    } finally {
      statements.mockRestore();
    }
  });

  it('shares the details answer between callers, but never their own parts (hasAlreadyOrdered, currency)', async () => {
    const { db } = app.services;
    const target = await createTopUp(db, { categoryId: topUpCategory.id, slug: 'shared-game' });
    const details = async (as: ReturnType<typeof client>) => (await expectJson(await as.get('/api/top-up/details?slug=shared-game'), 200)).message;
    const buyer = await createTestAccount(app, '10.00', 'Buyer');
    await createOrderFor(db, buyer.id, { topUpId: target.id, status: 1 });
    const euro = await createAccount(db, { firstname: 'Euro', lastname: 'Account', currency: 'EUR', currencySymbol: '€', balance: '10.00' });

    // Read by the caller first, so the others' answers would come from the cache if it ignored who asks.
    expect((await details(api)).reviewStatic.hasAlreadyOrdered).toBe(false);
    expect((await details(client(app, await tokenFor(app, buyer)))).reviewStatic.hasAlreadyOrdered).toBe(true);
    const euroServices = (await details(client(app, await tokenFor(app, euro)))).topUp.active_services;
    expect(euroServices.map((s: Json) => [s.currency, s.currency_symbol])).toEqual(euroServices.map(() => ['EUR', '€']));
    expect((await details(api)).topUp.active_services[0]).toMatchObject({ currency: 'USD', currency_symbol: '$' });
  });
});

describe('A5 topup/services', () => {
  it('lists active services of live top-ups, optionally of one top-up', async () => {
    const all = (await expectJson(await api.get('/api/topup/services'), 200)).message;
    expectKeys(all, ['services']);
    const ids = all.services.map((s: Json) => s.id);
    expect(ids).toEqual(expect.arrayContaining([game.services[0]!.id, game.services[1]!.id, plain.services[0]!.id]));
    expect(ids).not.toContain(game.services[2]!.id);
    for (const service of all.services) expectService(service, TOP_UP_SERVICE_KEYS);

    const one = (await expectJson(await api.get(`/api/topup/services?top_up_id=${game.id}`), 200)).message;
    expect(one.services.map((s: Json) => s.id)).toEqual([game.services[0]!.id, game.services[1]!.id]);
  });

  it('orders services by price when the top-up sorts by price, else by their own sort key', async () => {
    const { db } = app.services;
    const services = [
      { name: 'Big', price: '30.00', sortBy: 1 },
      { name: 'Small', price: '5.00', sortBy: 2 },
      { name: 'Medium', price: '10.00', sortBy: 3 },
    ];
    const byPrice = await createTopUp(db, { categoryId: topUpCategory.id, sortBy: 2, services });
    const byKey = await createTopUp(db, { categoryId: topUpCategory.id, sortBy: 1, services });
    const names = async (id: number) =>
      (await expectJson(await api.get(`/api/topup/services?top_up_id=${id}`), 200)).message.services.map((s: Json) => s.name);
    expect(await names(byPrice.id)).toEqual(['Small', 'Medium', 'Big']);
    expect(await names(byKey.id)).toEqual(['Big', 'Small', 'Medium']);
  });
});

describe('A9 get-card, A10 card/details, A11 card/services', () => {
  it('lists live cards with image URLs', async () => {
    const body = await expectJson(await api.get('/api/get-card'), 200);
    expectKeys(body.message, ['cards']);
    expect(body.message.cards).toEqual([
      {
        id: card.id,
        category_id: cardCategory.id,
        name: 'Steam Wallet',
        slug: 'steam-wallet',
        status: 1,
        product_image: `${app.baseUrl}/assets/cards/steam-wallet.webp`,
        preview_image: `${app.baseUrl}/assets/cards/steam-wallet-preview.webp`,
      },
    ]);
    for (const c of body.message.cards) expectKeys(c, CARD_KEYS);
    const filtered = await expectJson(await api.get(`/api/get-card?category_id=${cardCategory.id}`), 200);
    expect(filtered.message.cards).toHaveLength(1);
  });

  it('returns card details with services and gateways', async () => {
    const body = await expectJson(await api.get(`/api/card/details?card_id=${card.id}`), 200);
    expectKeys(body.message, ['services', 'card', 'gateways']);
    const { services, card: details, gateways } = body.message;
    expectKeys(details, CARD_DETAIL_KEYS);
    expect(details).toMatchObject({
      id: card.id,
      name: 'Steam Wallet',
      region: 'Global',
      note: null,
      instant_delivery: 1,
      description: card.description,
      guide: card.guide,
      total_review: 0,
      avg_rating: 0,
      sell_count: 42,
      trending: 1,
    });
    expect(details.created_at).toMatch(ISO_MICROS);
    expect(services.map((s: Json) => s.name)).toEqual(['$10', '$20']);
    for (const service of services) expectService(service, CARD_SERVICE_KEYS);
    expect(services[1]).toMatchObject({ card_id: card.id, price: 20, discount: 5, discount_type: 'percentage' });
    expect(gateways.map((g: Json) => g.code)).toEqual(['balance']);
  });

  it('lists card services, optionally of one card', async () => {
    const all = (await expectJson(await api.get('/api/card/services'), 200)).message;
    expect(all.services.map((s: Json) => s.id)).toEqual([card.services[0]!.id, card.services[1]!.id]);
    const one = (await expectJson(await api.get(`/api/card/services?card_id=${card.id}`), 200)).message;
    expect(one.services).toHaveLength(2);
    for (const service of one.services) expectService(service, CARD_SERVICE_KEYS);
  });
});
