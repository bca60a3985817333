import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, expectFailure, expectJson } from '../helpers/api.js';
import { createCampaign, createCard, createCategory, createTopUp, shiftDays } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { adminApi } from './admin.js';

let app: TestApp;
let admin: ReturnType<typeof adminApi>;

beforeAll(async () => {
  app = await startTestApp();
  admin = adminApi(app);
});
afterAll(async () => app?.close());

const TABLES = ['categories', 'top_ups', 'top_up_services', 'cards', 'card_services', 'gateways', 'campaigns', 'campaign_card_services', 'campaign_top_up_services'];

/** Every row of the store's tables, to show that a refused change wrote nothing. */
async function storeRows() {
  const { sql } = app.services;
  return Promise.all(TABLES.map((table) => sql`select * from ${sql(table)} order by 1, 2`));
}

/** The request is refused with `status` and `errors`, and nothing changes. */
async function refused(request: () => Promise<Response>, status: number, errors: string | string[]) {
  const before = await storeRows();
  expect(await expectFailure(await request(), status)).toEqual(errors);
  expect(await storeRows()).toEqual(before);
}

const ORDER_FIELD = { field_value: 'Player ID', field_name: 'player_id', field_type: 'text' };

describe('validation (422, one message per field, nothing written)', () => {
  it('categories', async () => {
    await refused(() => admin.post('/admin/categories', {}), 422, ['The name field is required.', 'The type field is required.']);
    await refused(() => admin.post('/admin/categories', { name: 'A', type: 'game', status: 2 }), 422, [
      'The type field must be top_up or card.',
      'The status field must be 0 or 1.',
    ]);
    const category = await createCategory(app.services.db);
    await refused(() => admin.patch(`/admin/categories/${category.id}`, { name: '  ', icon: 'x'.repeat(121) }), 422, [
      'The name field is required.',
      'The icon field must not be greater than 120 characters.',
    ]);
    await refused(() => admin.patch(`/admin/categories/${category.id}`, { name: 'Bad\u0000name' }), 422, [
      'The name field must not contain NUL characters or unpaired surrogates.',
    ]);
  });

  it('top-ups: required fields, the category and its type, the slug, the order form', async () => {
    const topUps = await createCategory(app.services.db, { type: 'top_up' });
    const cards = await createCategory(app.services.db, { type: 'card' });
    const valid = { category_id: topUps.id, name: 'Valid', region: 'EU', order_information: [ORDER_FIELD] };
    await refused(() => admin.post('/admin/top-ups', {}), 422, [
      'The category id field is required.',
      'The name field is required.',
      'The region field is required.',
      'The order information field is required.',
    ]);
    await refused(() => admin.post('/admin/top-ups', { ...valid, category_id: 999_999 }), 422, ['The selected category id is invalid.']);
    await refused(() => admin.post('/admin/top-ups', { ...valid, category_id: 3_000_000_000 }), 422, ['The selected category id is invalid.']);
    await refused(() => admin.post('/admin/top-ups', { ...valid, category_id: cards.id }), 422, ['The category id field must name a top-up category.']);
    await refused(() => admin.post('/admin/top-ups', { ...valid, slug: 'Not A Slug' }), 422, [
      'The slug field must hold only lowercase letters, digits and single dashes.',
    ]);
    await refused(() => admin.post('/admin/top-ups', { ...valid, name: '!!!' }), 422, ['The slug field is required.']);
    await refused(() => admin.post('/admin/top-ups', { ...valid, order_information: 'player_id' }), 422, ['The order information field must be a list.']);

    const entry = (field: object) => () => admin.post('/admin/top-ups', { ...valid, order_information: [ORDER_FIELD, field] });
    await refused(entry({ field_value: 'Zone', field_type: 'text' }), 422, ['The order information.1.field name field is required.']);
    await refused(entry({ ...ORDER_FIELD, field_value: 'Again' }), 422, ['The order information.1.field name field has a duplicate value.']);
    await refused(entry({ field_value: 'Zone', field_name: 'zone id', field_type: 'text' }), 422, [
      'The order information.1.field name field must start with a letter and hold only letters, digits and underscores.',
    ]);
    for (const taken of ['serviceId', 'max_price']) {
      await refused(entry({ field_value: 'Zone', field_name: taken, field_type: 'text' }), 422, [
        'The order information.1.field name field must not be topUpId, serviceId, max_price or check_player.',
      ]);
    }
    await refused(entry({ field_value: 'Zone', field_name: 'zone', field_type: 'radio' }), 422, ['The order information.1.field type field must be text or select.']);
    await refused(entry({ field_value: 'Zone', field_name: 'zone', field_type: 'select' }), 422, ['The order information.1.option field is required.']);
    await refused(entry({ field_value: 'Zone', field_name: 'zone', field_type: 'select', option: {} }), 422, [
      'The order information.1.option field is required for a select field.',
    ]);
    await refused(entry({ field_value: 'Zone', field_name: 'zone', field_type: 'text', option: { a: 'A' } }), 422, [
      'The order information.1.option field is only for select fields.',
    ]);
    await refused(entry(['zone']), 422, ['The order information.1 field must be an object.']);
  });

  it('a slug already taken (created or changed) is a 422 of the slug field', async () => {
    const category = await createCategory(app.services.db, { type: 'card' });
    const taken = await createCard(app.services.db, { categoryId: category.id, slug: 'taken-card' });
    const other = await createCard(app.services.db, { categoryId: category.id });
    await refused(() => admin.post('/admin/cards', { category_id: category.id, name: 'Taken card' }), 422, ['The slug has already been taken.']);
    await refused(() => admin.patch(`/admin/cards/${other.id}`, { slug: taken.slug }), 422, ['The slug has already been taken.']);
    // Top-ups and cards have slugs of their own.
    const topUps = await createCategory(app.services.db, { type: 'top_up' });
    const topUp = await expectJson(await admin.post('/admin/top-ups', { category_id: topUps.id, name: 'Taken card', region: 'EU', order_information: [] }), 200);
    expect(topUp.message.slug).toBe('taken-card');
  });

  it('services: price, discount and their rule (C6), the low-stock threshold', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00', discount: '2.00' }] });
    const service = card.services[0]!;
    await refused(() => admin.post(`/admin/cards/${card.id}/services`, {}), 422, ['The name field is required.', 'The price field is required.']);
    await refused(() => admin.post(`/admin/cards/${card.id}/services`, { name: 'X', price: '1.005', discount_type: 'fixed', low_stock_threshold: -1 }), 422, [
      'The price field must be a number with at most 2 decimals.',
      'The discount type field must be percentage or flat.',
      'The low stock threshold field must be at least 0.',
    ]);
    await refused(() => admin.post(`/admin/cards/${card.id}/services`, { name: 'X', price: '5.00', discount: '6' }), 422, [
      'The discount field must not be greater than the price.',
    ]);
    await refused(() => admin.post(`/admin/cards/${card.id}/services`, { name: 'X', price: '5.00', discount: 101, discount_type: 'percentage' }), 422, [
      'The discount field must not be greater than 100 for a percentage discount.',
    ]);
    // The rule holds for the pricing after a change: a lower price under the current 2.00 discount.
    await refused(() => admin.patch(`/admin/card-services/${service.id}`, { price: '1.50' }), 422, ['The discount field must not be greater than the price.']);
    await refused(() => admin.patch(`/admin/card-services/${service.id}`, { price: 1e15 }), 422, ['The price field must be a number with at most 2 decimals.']);
  });

  it('gateways', async () => {
    await refused(() => admin.post('/admin/gateways', { code: 'x', is_sandbox: 2, parameters: ['a'] }), 422, [
      'The name field is required.',
      'The parameters field must be an object of strings.',
      'The is sandbox field must be 0 or 1.',
    ]);
    await refused(() => admin.post('/admin/gateways', { code: 'x', name: 'X', receivable_currencies: [{ name: 'USD' }] }), 422, [
      'The receivable currencies.0.currency symbol field is required.',
    ]);
  });

  it('campaigns: dates, services, pricing', async () => {
    const card = await createCard(app.services.db);
    const topUp = await createTopUp(app.services.db);
    const dates = { name: 'Sale', start_date: shiftDays(0), end_date: shiftDays(3) };
    const member = { id: card.services[0]!.id, price: '8.00', max_sell: 5 };
    await refused(() => admin.post('/admin/campaigns', {}), 422, [
      'The name field is required.',
      'The start date field is required.',
      'The end date field is required.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, start_date: '2026-02-30', end_date: 'tomorrow' }), 422, [
      'The start date field must be a date in the form YYYY-MM-DD.',
      'The end date field must be a date in the form YYYY-MM-DD.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, end_date: shiftDays(-1) }), 422, ['The end date field must be a date after or equal to start date.']);
    // One entry where a list is declared is not a list of one.
    await refused(() => admin.post('/admin/campaigns', { ...dates, card_services: member, top_up_services: 5 }), 422, [
      'The top up services field must be a list.',
      'The card services field must be a list.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, card_services: [member, { ...member, price: '7.00' }] }), 422, [
      'The card services.1.id field has a duplicate value.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, card_services: [{ ...member, max_sell: 0 }] }), 422, [
      'The card services.0.max sell field must be a positive integer.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, top_up_services: [{ ...member, id: card.services[0]!.id + 1000 }] }), 422, [
      'The selected top up services.0.id is invalid.',
    ]);
    await refused(() => admin.post('/admin/campaigns', { ...dates, top_up_services: [{ id: topUp.services[0]!.id, price: '8.00', discount: 9, max_sell: 1 }] }), 422, [
      'The top up services.0.discount field must not be greater than the price.',
    ]);
  });

  it('campaigns: max_sell below the units already sold in the campaign', async () => {
    const card = await createCard(app.services.db);
    const serviceId = card.services[0]!.id;
    const campaign = await createCampaign(app.services.db, { start: shiftDays(0), cardServices: [{ serviceId, price: '8.00', maxSell: 10 }] });
    await app.services.sql`update card_services set offered_sell = 4 where id = ${serviceId}`;
    await refused(() => admin.patch(`/admin/campaigns/${campaign.id}`, { card_services: [{ id: serviceId, price: '7.00', max_sell: 3 }] }), 422, [
      'The card services.0.max sell field must be at least 4, the units already sold in this campaign.',
    ]);
    await refused(() => admin.patch(`/admin/campaigns/${campaign.id}`, { end_date: shiftDays(-1) }), 422, [
      'The end date field must be a date after or equal to start date.',
    ]);
  });
});

describe('unknown ids in the URL (404) and refusals', () => {
  it('answers 404 for an id that names nothing, or is no id at all', async () => {
    const routes: Array<[method: 'post' | 'patch', path: string, body: object, what: string]> = [
      ['patch', '/admin/categories/:id', { name: 'X' }, 'category'],
      ['patch', '/admin/top-ups/:id', { name: 'X' }, 'top-up'],
      ['post', '/admin/top-ups/:id/services', { name: 'X', price: 1 }, 'top-up'],
      ['patch', '/admin/top-up-services/:id', { name: 'X' }, 'top-up service'],
      ['patch', '/admin/cards/:id', { name: 'X' }, 'card'],
      ['post', '/admin/cards/:id/services', { name: 'X', price: 1 }, 'card'],
      ['patch', '/admin/card-services/:id', { name: 'X' }, 'card service'],
      ['patch', '/admin/gateways/:id', { name: 'X' }, 'gateway'],
      ['patch', '/admin/campaigns/:id', { name: 'X' }, 'campaign'],
      ['post', '/admin/campaigns/:id/end', {}, 'campaign'],
    ];
    for (const [method, path, body, what] of routes) {
      for (const id of ['999999', '2147483648', '0']) {
        await refused(() => admin[method](path.replace(':id', id), body), 404, `No ${what} with id ${id}.`);
      }
      await refused(() => admin[method](path.replace(':id', 'abc'), body), 404, `No ${what} with id "abc".`);
    }
  });

  it('a category keeps its type while it holds products (409)', async () => {
    const category = await createCategory(app.services.db, { type: 'card' });
    await createCard(app.services.db, { categoryId: category.id, status: 0 });
    await refused(() => admin.patch(`/admin/categories/${category.id}`, { type: 'top_up' }), 409, 'The type of a category cannot change while it holds products.');
    const empty = await createCategory(app.services.db, { type: 'card' });
    expect((await expectJson(await admin.patch(`/admin/categories/${empty.id}`, { type: 'top_up' }), 200)).message.type).toBe('top_up');
  });

  it('a body that is not a JSON object is a 400', async () => {
    const request = (body: string) =>
      app.request('/admin/categories', { method: 'POST', headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' }, body });
    await refused(() => request('{"name":'), 400, 'The request body is not a valid JSON object.');
    await refused(() => request('[]'), 400, 'The request body is not a valid JSON object.');
  });

  it('a product whose category is inactive cannot be ordered, even straight by id', async () => {
    const category = await createCategory(app.services.db, { type: 'card', status: 0 });
    const card = await createCard(app.services.db, { categoryId: category.id });
    const { api } = await buyer(app);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 422)).toEqual([
      'The selected service ids is invalid.',
    ]);
    await expectFailure(await api.get(`/api/card/details?card_id=${card.id}`), 404);
  });
});
