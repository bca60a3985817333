import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, expectFailure, expectJson, ISO_MICROS, type Json } from '../helpers/api.js';
import { createCategory, createReview, shiftDays } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createServices } from '../../src/runtime/services.js';
import { storeGauges } from '../../src/startup/gauges.js';
import { CARD_DETAIL_KEYS, CARD_SERVICE_KEYS, CATEGORY_KEYS, CAMPAIGN_KEYS, expectKeys, GATEWAY_KEYS, TOP_UP_KEYS, TOP_UP_SERVICE_KEYS } from '../catalog/shapes.js';
import { adminApi } from './admin.js';

let app: TestApp;
let admin: ReturnType<typeof adminApi>;
let shopper: Awaited<ReturnType<typeof buyer>>;

beforeAll(async () => {
  app = await startTestApp();
  admin = adminApi(app);
  shopper = await buyer(app, '1000.00');
});
afterAll(async () => app?.close());

/** The `message` of a successful answer. */
const ok = async (response: Promise<Response>) => {
  const body = await expectJson(await response, 200);
  expect(body.status).toBe('success');
  return body.message as Json;
};
const get = (path: string) => ok(shopper.api.get(path));

const ORDER_FORM = [
  { field_value: 'Player ID', field_name: 'player_id', field_placeholder: 'e.g. 5123456789', field_type: 'text' },
  { field_value: 'Server', field_name: 'server', field_type: 'select', option: { eu: 'Europe', na: 'North America' } },
];

async function newCategory(type: 'top_up' | 'card') {
  return ok(admin.post('/admin/categories', { name: `${type} games`, icon: 'fas fa-gamepad', type }));
}

async function newTopUp(name = 'Star Quest') {
  const category = await newCategory('top_up');
  const topUp = await ok(admin.post('/admin/top-ups', { category_id: category.id, name, region: 'Europe', order_information: ORDER_FORM }));
  const small = await ok(admin.post(`/admin/top-ups/${topUp.id}/services`, { name: '100 Gems', price: '10.00', discount: '1.50' }));
  const large = await ok(admin.post(`/admin/top-ups/${topUp.id}/services`, { name: '500 Gems', price: 45, discount: 10, discount_type: 'percentage' }));
  return { category, topUp, small, large };
}

async function newCard(name = 'Play Card') {
  const category = await newCategory('card');
  const card = await ok(admin.post('/admin/cards', { category_id: category.id, name, description: '<p>A gift card.</p>' }));
  const ten = await ok(admin.post(`/admin/cards/${card.id}/services`, { name: '$10', price: '10.00', low_stock_threshold: 5 }));
  const twenty = await ok(admin.post(`/admin/cards/${card.id}/services`, { name: '$20', price: '20.00' }));
  return { category, card, ten, twenty };
}

const cardOrder = (serviceId: number, quantity = 1) => shopper.api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [quantity] });
const topUpOrder = (topUpId: number, serviceId: number) =>
  shopper.api.postForm('/api/top-up/make-order', { topUpId: String(topUpId), serviceId: String(serviceId), player_id: '5123456789', server: 'eu' });

describe('categories', () => {
  it('POST creates a category that the catalog lists at once; PATCH renames it everywhere', async () => {
    const before = await get('/api/get-category');
    const created = await ok(admin.post('/admin/categories', { name: 'Shooters', type: 'top_up' }));
    expectKeys(created, CATEGORY_KEYS);
    expect(created).toMatchObject({ name: 'Shooters', icon: '', type: 'top_up', active_children: 0 });
    expect((await get('/api/get-category')).categories).toEqual([...before.categories, created]);

    const renamed = await ok(admin.patch(`/admin/categories/${created.id}`, { name: 'Arena shooters', icon: 'fas fa-crosshairs' }));
    expect(renamed).toEqual({ ...created, name: 'Arena shooters', icon: 'fas fa-crosshairs' });
    expect((await get('/api/get-category')).categories).toContainEqual(renamed);
  });

  it('PATCH status 0 takes the category and its products out of the catalog and refuses their orders', async () => {
    const { category, topUp, small } = await newTopUp('Hidden Realm');
    await get(`/api/top-up/list?category_id=${category.id}`);
    const hidden = await ok(admin.patch(`/admin/categories/${category.id}`, { status: 0 }));
    expect(hidden).toMatchObject({ id: category.id, active_children: 0 });
    expect((await get('/api/get-category')).categories.map((c: Json) => c.id)).not.toContain(category.id);
    await expectFailure(await shopper.api.get(`/api/top-up/list?category_id=${category.id}`), 404);
    await expectFailure(await shopper.api.get(`/api/top-up/details?slug=${topUp.slug}`), 404);
    expect(await expectFailure(await topUpOrder(topUp.id, small.id), 422)).toEqual(['The selected top up id is invalid.']);

    const shown = await ok(admin.patch(`/admin/categories/${category.id}`, { status: 1 }));
    expect(shown.active_children).toBe(1);
    expect((await get(`/api/top-up/list?category_id=${category.id}`)).items.map((t: Json) => t.id)).toEqual([topUp.id]);
  });
});

describe('top-ups and their services', () => {
  it('POST /admin/top-ups and /admin/top-ups/:id/services build a top-up the catalog shows and that can be ordered', async () => {
    const { category, topUp, small, large } = await newTopUp();
    expectKeys(topUp, [...TOP_UP_KEYS, 'services']);
    expect(topUp).toMatchObject({
      category_id: category.id,
      name: 'Star Quest',
      slug: 'star-quest',
      region: 'Europe',
      note: null,
      status: 1,
      description: '',
      guide: '',
      services: [],
      order_information: {
        '1': { ...ORDER_FORM[0], field_note: '' },
        '2': { ...ORDER_FORM[1], field_placeholder: '', field_note: '' },
      },
    });
    expect(topUp.created_at).toMatch(ISO_MICROS);
    expectKeys(small, TOP_UP_SERVICE_KEYS);
    expect(small).toMatchObject({ top_up_id: topUp.id, name: '100 Gems', price: 10, discount: 1.5, discount_type: 'flat', status: 1, is_offered: 0 });
    expect(large).toMatchObject({ price: 45, discount: 10, discount_type: 'percentage' });

    const listed = (await get(`/api/top-up/list?category_id=${category.id}`)).items as Json[];
    expect(listed).toHaveLength(1);
    expect(listed[0]!.services).toEqual([small, large]);
    const details = (await get('/api/top-up/details?slug=star-quest')).topUp;
    expect(details.order_information).toEqual([
      { ...ORDER_FORM[0], field_note: '' },
      { ...ORDER_FORM[1], field_placeholder: '', field_note: '' },
    ]);
    expect(details.active_services.map((s: Json) => [s.id, s.discountedPriceWithoutDiscount])).toEqual([
      [small.id, 8.5],
      [large.id, 40.5],
    ]);
    expect((await get(`/api/topup/services?top_up_id=${topUp.id}`)).services).toEqual([small, large]);

    await ok(topUpOrder(topUp.id, large.id));
    const [order] = (await get('/api/get-topup/orders')).data as Json[];
    expect(order).toMatchObject({ price: 40.5, informations: { 'Player ID': '5123456789', Server: 'eu' } });
  });

  it('PATCH changes a top-up, its order form and a service; the catalog shows the change at once', async () => {
    const { topUp, small } = await newTopUp('Sky Forge');
    await get(`/api/topup/services?top_up_id=${topUp.id}`);
    const changed = await ok(
      admin.patch(`/admin/top-ups/${topUp.id}`, {
        name: 'Sky Forge Online',
        slug: 'sky-forge-online',
        note: 'Delivered within minutes',
        order_information: [ORDER_FORM[0]],
      }),
    );
    expect(changed).toMatchObject({ name: 'Sky Forge Online', slug: 'sky-forge-online', note: 'Delivered within minutes', region: 'Europe' });
    expect(Object.keys(changed.order_information)).toEqual(['1']);
    expect(changed.services.map((s: Json) => s.id)).toHaveLength(2);
    await expectFailure(await shopper.api.get('/api/top-up/details?slug=sky-forge'), 404);
    expect((await get('/api/top-up/details?slug=sky-forge-online')).topUp.name).toBe('Sky Forge Online');

    const repriced = await ok(admin.patch(`/admin/top-up-services/${small.id}`, { price: '12.00', name: '120 Gems' }));
    expect(repriced).toMatchObject({ id: small.id, name: '120 Gems', price: 12, discount: 1.5, old_data: null });
    expect((await get(`/api/topup/services?top_up_id=${topUp.id}`)).services[0]).toEqual(repriced);

    // The order form now asks for the player id only.
    await ok(shopper.api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(small.id), player_id: '42' }));
  });
});

describe('cards and their services', () => {
  it('POST /admin/cards and /admin/cards/:id/services build a card the catalog shows and that can be ordered', async () => {
    const { category, card, ten, twenty } = await newCard();
    expectKeys(card, CARD_DETAIL_KEYS);
    expect(card).toMatchObject({ category_id: category.id, name: 'Play Card', slug: 'play-card', region: 'Global', status: 1, instant_delivery: 1 });
    expectKeys(ten, [...CARD_SERVICE_KEYS, 'low_stock_threshold']);
    expect(ten).toMatchObject({ card_id: card.id, name: '$10', price: 10, discount: 0, discount_type: 'flat', low_stock_threshold: 5 });
    expect(twenty.low_stock_threshold).toBe(0);

    expect((await get(`/api/get-card?category_id=${category.id}`)).cards.map((c: Json) => c.id)).toEqual([card.id]);
    const details = await get(`/api/card/details?card_id=${card.id}`);
    expect(details.card).toMatchObject({ id: card.id, description: '<p>A gift card.</p>' });
    const catalogView = ({ low_stock_threshold: _threshold, ...service }: Json) => service;
    expect(details.services).toEqual([catalogView(ten), catalogView(twenty)]);
    expect((await get(`/api/card/services?card_id=${card.id}`)).services).toEqual([catalogView(ten), catalogView(twenty)]);

    const { utr } = await ok(cardOrder(twenty.id, 2));
    const [order] = (await get('/api/get-card/orders')).data as Json[];
    expect(order).toMatchObject({ utr, price: 40 });
  });

  it('PATCH status 0 of a card or a service takes it out of the catalog and refuses new orders; its orders and reviews stay', async () => {
    const { card, ten, twenty } = await newCard('Hidden Card');
    const { utr } = await ok(cardOrder(ten.id));
    await createReview(app.services.db, { accountId: shopper.keys.id, kind: 'card', productId: card.id, comment: 'Arrived at once' });
    await get(`/api/card/services?card_id=${card.id}`);

    const service = await ok(admin.patch(`/admin/card-services/${twenty.id}`, { status: 0, low_stock_threshold: 3 }));
    expect(service).toMatchObject({ status: 0, low_stock_threshold: 3 });
    expect((await get(`/api/card/services?card_id=${card.id}`)).services.map((s: Json) => s.id)).toEqual([ten.id]);
    expect(await expectFailure(await cardOrder(twenty.id), 422)).toEqual(['The selected service ids is invalid.']);

    const hidden = await ok(admin.patch(`/admin/cards/${card.id}`, { status: 0 }));
    expect(hidden).toMatchObject({ id: card.id, status: 0 });
    expect((await get('/api/get-card')).cards.map((c: Json) => c.id)).not.toContain(card.id);
    await expectFailure(await shopper.api.get(`/api/card/details?card_id=${card.id}`), 404);
    await expectFailure(await shopper.api.get(`/api/card/services?card_id=${card.id}`), 404);
    expect(await expectFailure(await cardOrder(ten.id), 422)).toEqual(['The selected service ids is invalid.']);

    const listed = ((await get('/api/get-card/orders?per_page=100')).data as Json[]).find((o) => o.utr === utr);
    expect(listed?.review_user_info).toEqual([{ review: { comment: 'Arrived at once', rating: 5, status: 'active' } }]);

    await ok(admin.patch(`/admin/cards/${card.id}`, { status: 1 }));
    expect((await get(`/api/card/review?card_id=${card.id}`)).reviews.map((r: Json) => r.comment)).toEqual(['Arrived at once']);
    await ok(cardOrder(ten.id));
  });
});

describe('gateways', () => {
  it('POST creates a gateway shown in card details; PATCH status 0 hides it', async () => {
    const { card } = await newCard('Gateway Card');
    const gateway = await ok(
      admin.post('/admin/gateways', {
        code: 'wallet',
        name: 'Store wallet',
        sort_by: 1,
        image: 'gateways/wallet.webp',
        parameters: { merchant_name: 'Demo Store' },
        currencies: { '0': { USD: 'USD' } },
        supported_currency: ['USD'],
        receivable_currencies: [
          { name: 'USD', currency_symbol: '$', conversion_rate: '1', min_limit: '1', max_limit: '1000', percentage_charge: '0', fixed_charge: '0' },
        ],
        description: 'Pay from the balance.',
      }),
    );
    expectKeys(gateway, GATEWAY_KEYS);
    expect(gateway).toMatchObject({ code: 'wallet', status: 1, driver: 'local', extra_parameters: null, is_manual: null, environment: 'live', currency_type: 1 });
    expect(gateway.image).toMatch(/\/assets\/gateways\/wallet\.webp$/);
    expect((await get(`/api/card/details?card_id=${card.id}`)).gateways).toContainEqual(gateway);

    const hidden = await ok(admin.patch(`/admin/gateways/${gateway.id}`, { status: 0, note: 'Paused' }));
    expect(hidden).toMatchObject({ status: 0, note: 'Paused', name: 'Store wallet' });
    expect((await get(`/api/card/details?card_id=${card.id}`)).gateways.map((g: Json) => g.id)).not.toContain(gateway.id);
  });
});

describe('campaigns', () => {
  it('a campaign over today prices its services at once; PATCH reprices them keeping units sold; end restores the pricing', async () => {
    const { card, ten, twenty } = await newCard('Spring Card');
    const { small } = await newTopUp('Campaign Quest');
    expect((await get('/api/get-campaign')).campaign).toBeNull();

    const campaign = await ok(
      admin.post('/admin/campaigns', {
        name: 'Spring sale',
        start_date: shiftDays(0),
        end_date: shiftDays(7),
        card_services: [
          { id: ten.id, price: '8.00', discount: '0', discount_type: 'flat', max_sell: 2 },
          { id: twenty.id, price: '20.00', discount: '10', discount_type: 'percentage', max_sell: 5 },
        ],
        top_up_services: [{ id: small.id, price: '9.00', discount: '1.00', discount_type: 'flat', max_sell: 10 }],
      }),
    );
    expectKeys(campaign, CAMPAIGN_KEYS);
    expect(campaign).toMatchObject({ name: 'Spring sale', start_date: shiftDays(0), end_date: shiftDays(7), status: 1 });
    expect(campaign.cards.map((s: Json) => [s.id, s.price, s.max_sell, s.offered_sell])).toEqual([
      [ten.id, 8, 2, 0],
      [twenty.id, 20, 5, 0],
    ]);
    expect((await get('/api/get-campaign')).campaign).toEqual(campaign);
    const services = (await get(`/api/card/services?card_id=${card.id}`)).services as Json[];
    expect(services[0]).toMatchObject({
      price: 8,
      is_offered: 1,
      old_data: { price: '10.00', discount: '0.00', discount_type: 'flat' },
      campaign_data: { price: '8.00', discount: '0.00', discount_type: 'flat', max_sell: '2' },
    });

    // Caps: two units at the campaign price, the third at the regular price; the service then leaves the campaign.
    await ok(cardOrder(ten.id, 3));
    await ok(cardOrder(twenty.id, 1));
    const [line] = await app.services.sql`select campaign_units, line_total from order_lines where card_service_id = ${ten.id}`;
    expect(line).toEqual({ campaign_units: 2, line_total: '26.00' });

    // PATCH: a new campaign price for the $20 service, the one unit sold kept; the capped $10 service leaves.
    const changed = await ok(
      admin.patch(`/admin/campaigns/${campaign.id}`, { name: 'Spring sale II', card_services: [{ id: twenty.id, price: '17.00', max_sell: 4 }] }),
    );
    expect(changed.name).toBe('Spring sale II');
    expect(changed.cards.map((s: Json) => [s.id, s.price, s.discount, s.discount_type, s.max_sell, s.offered_sell])).toEqual([
      [twenty.id, 17, 0, 'flat', 4, 1],
    ]);
    const [capped, repriced] = (await get(`/api/card/services?card_id=${card.id}`)).services as Json[];
    expect(capped).toMatchObject({ id: ten.id, price: 10, is_offered: 0, offered_sell: 2, old_data: null, campaign_data: null });
    expect(repriced).toMatchObject({ id: twenty.id, price: 17, is_offered: 1, offered_sell: 1, max_sell: 4 });
    expect(repriced!.campaign_data).toEqual({ price: '17.00', discount: '0.00', discount_type: 'flat', max_sell: '4' });
    const left = await app.services.sql`
      select card_service_id from campaign_card_services where campaign_id = ${campaign.id} and left_at is not null`;
    expect(left).toEqual([{ card_service_id: ten.id }]);

    // The service's own price changes while it is in the campaign: kept for when the campaign ends.
    const ownChange = await ok(admin.patch(`/admin/card-services/${twenty.id}`, { price: '22.00', discount: '0' }));
    expect(ownChange).toMatchObject({ price: 17, is_offered: 1, old_data: { price: '22.00', discount: '0.00', discount_type: 'flat' } });

    const ended = await ok(admin.post(`/admin/campaigns/${campaign.id}/end`));
    expect(ended).toMatchObject({ id: campaign.id, status: 0, end_date: shiftDays(0) });
    expect((await get('/api/get-campaign')).campaign).toBeNull();
    const restored = (await get(`/api/card/services?card_id=${card.id}`)).services as Json[];
    expect(restored[1]).toMatchObject({ id: twenty.id, price: 22, discount: 0, discount_type: 'flat', is_offered: 0, old_data: null, campaign_data: null });
    expect((await get(`/api/topup/services?top_up_id=${small.top_up_id}`)).services[0]).toMatchObject({ id: small.id, price: 10, discount: 1.5, is_offered: 0 });
  });

  it('a campaign that starts later waits for its dates; a PATCH moving them to today starts it', async () => {
    const { ten } = await newCard('Summer Card');
    const later = await ok(
      admin.post('/admin/campaigns', { name: 'Summer', start_date: shiftDays(3), end_date: shiftDays(9), card_services: [{ id: ten.id, price: '9.00', max_sell: 3 }] }),
    );
    expect(later.cards).toEqual([expect.objectContaining({ id: ten.id, price: 10, campaign_data: null })]);
    const started = await ok(admin.patch(`/admin/campaigns/${later.id}`, { start_date: shiftDays(0) }));
    expect(started.cards).toEqual([expect.objectContaining({ id: ten.id, price: 9, campaign_data: expect.objectContaining({ max_sell: '3' }) })]);
    await ok(admin.patch(`/admin/campaigns/${later.id}`, { status: 0 }));
  });
});

describe('catalog caches', () => {
  it('a change drops the catalog cache of every process at once', async () => {
    const other = createServices(app.services.config, storeGauges);
    try {
      let cachedAt = 0;
      await expect
        .poll(async () => {
          cachedAt = Date.now();
          await other.catalogCache.get('probe', async () => 'before');
          return other.catalogCache.get('probe', async () => 'not cached');
        })
        .toBe('before');
      await ok(admin.post('/admin/categories', { name: 'Racing', type: 'card' }));
      await expect.poll(() => other.catalogCache.get('probe', async () => 'after')).toBe('after');
      // Well within the cache's 2 s lifetime: the entry was dropped, not expired.
      expect(Date.now() - cachedAt).toBeLessThan(2000);
    } finally {
      await other.close();
    }
  });
});

it('product slugs: made from the name, or as given', async () => {
  const category = await createCategory(app.services.db, { type: 'card' });
  expect((await ok(admin.post('/admin/cards', { category_id: category.id, name: 'Crème Brûlée — Gift' }))).slug).toBe('creme-brulee-gift');
  expect((await ok(admin.post('/admin/cards', { category_id: category.id, name: 'Other', slug: 'my-card-2' }))).slug).toBe('my-card-2');
});
