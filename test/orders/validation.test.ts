import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, expectFailure, expectJson, tokenFor } from '../helpers/api.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { MAX_QUANTITY_PER_LINE: '5' } });
});
afterAll(async () => app?.close());

/** Rows of every table an order writes, to prove a refusal wrote nothing. */
async function footprint() {
  const [row] = await app.services.sql`
    select (select count(*) from orders)::int as orders, (select count(*) from order_lines)::int as lines,
           (select count(*) from balance_ledger)::int as ledger, (select count(*) from idempotency_keys)::int as keys,
           (select coalesce(sum(balance), 0) from accounts)::text as balances,
           (select coalesce(sum(offered_sell), 0) from card_services)::int as offered`;
  return row;
}

const orderFields = [
  { field_value: 'Player ID', field_name: 'User_Id', field_placeholder: '', field_note: '', field_type: 'text' as const },
  { field_value: 'Server', field_name: 'Zone_Name', field_placeholder: '', field_note: '', field_type: 'select' as const, option: { asia: 'Asia' } },
];

describe('A6 validation (C4) and refusals', () => {
  it('requires the ids', async () => {
    const { api } = await buyer(app);
    expect(await expectFailure(await api.postForm('/api/top-up/make-order', {}), 422)).toEqual([
      'The top up id field is required.',
      'The service id field is required.',
    ]);
    expect(await expectFailure(await api.postJson('/api/top-up/make-order', { topUpId: -1, serviceId: 'x' }), 422)).toEqual([
      'The top up id field must be a positive integer.',
      'The service id field must be a positive integer.',
    ]);
  });

  it('requires every order-form field, labelled by field_value, and a listed option for selects', async () => {
    const { api } = await buyer(app);
    const topUp = await createTopUp(app.services.db, { orderFields });
    const ids = { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id) };
    expect(await expectFailure(await api.postForm('/api/top-up/make-order', ids), 422)).toEqual([
      'The Player ID field is required.',
      'The Server field is required.',
    ]);
    expect(await expectFailure(await api.postForm('/api/top-up/make-order', { ...ids, User_Id: '1', Zone_Name: 'mars' }), 422)).toEqual([
      'The selected Server is invalid.',
    ]);
  });

  it('names every failing field at once: the ids the schema refuses and the order form it judges against the top-up (spec §7.3)', async () => {
    const { api } = await buyer(app);
    const topUp = await createTopUp(app.services.db, { orderFields });
    const other = await createTopUp(app.services.db);
    const before = await footprint();
    expect(await expectFailure(await api.postJson('/api/top-up/make-order', { topUpId: topUp.id }), 422)).toEqual([
      'The service id field is required.',
      'The Player ID field is required.',
      'The Server field is required.',
    ]);
    expect(await expectFailure(await api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(other.services[0]!.id), Zone_Name: 'mars', max_price: 'cheap' }), 422)).toEqual([
      'The max price field must be a number with at most 2 decimals.',
      'The selected service id is invalid.',
      'The Player ID field is required.',
      'The selected Server is invalid.',
    ]);
    // The player check reads the same form.
    expect(await expectFailure(await api.postJson('/api/top-up/check-player', { topUpId: topUp.id, serviceId: 'x', Zone_Name: 'asia' }), 422)).toEqual([
      'The service id field must be a positive integer.',
      'The Player ID field is required.',
    ]);
    expect(await footprint()).toEqual(before);
  });

  it('refuses unknown, inactive and foreign ids with 422', async () => {
    const { api } = await buyer(app);
    const topUp = await createTopUp(app.services.db, { services: [{}, { status: 0 }] });
    const other = await createTopUp(app.services.db);
    const inactive = await createTopUp(app.services.db, { status: 0 });
    const cases: Array<[Record<string, number>, string[]]> = [
      [{ topUpId: 999_999, serviceId: topUp.services[0]!.id }, ['The selected top up id is invalid.']],
      [{ topUpId: inactive.id, serviceId: inactive.services[0]!.id }, ['The selected top up id is invalid.']],
      [{ topUpId: topUp.id, serviceId: topUp.services[1]!.id }, ['The selected service id is invalid.']],
      [{ topUpId: topUp.id, serviceId: other.services[0]!.id }, ['The selected service id is invalid.']],
    ];
    const before = await footprint();
    for (const [body, errors] of cases) expect(await expectFailure(await api.postJson('/api/top-up/make-order', body), 422)).toEqual(errors);
    expect(await footprint()).toEqual(before);
  });

  it('answers 409 Insufficient balance and writes nothing, campaign reservation included', async () => {
    const { keys, api } = await buyer(app, '5.00');
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    await createCampaign(app.services.db, { topUpServices: [{ serviceId: topUp.services[0]!.id, price: '9.00', maxSell: 5 }] });
    const before = await footprint();
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id };
    expect(await expectFailure(await api.postJson('/api/top-up/make-order', body, { 'Idempotency-Key': 'poor-1' }), 409)).toBe('Insufficient balance');
    expect(await footprint()).toEqual(before);
    const [service] = await app.services.sql`select offered_sell from top_up_services where id = ${topUp.services[0]!.id}`;
    expect(service!.offered_sell).toBe(0);
    const [account] = await app.services.sql`select balance from accounts where id = ${keys.id}`;
    expect(account!.balance).toBe('5.00');
  });

  it('validates before business rules: a bad body with no balance is 422', async () => {
    const { api } = await buyer(app, '0.00');
    expect(await expectFailure(await api.postJson('/api/top-up/make-order', {}), 422)).toHaveLength(2);
  });

  /** A top-up order whose body is sent as written, under `contentType`. */
  const sendRaw = async (contentType: string, body: string) => {
    const { keys } = await buyer(app);
    return app.request('/api/top-up/make-order', {
      method: 'POST',
      headers: { Authorization: await tokenFor(app, keys), 'Content-Type': contentType },
      body,
    });
  };

  it('answers 400 for a malformed JSON body', async () => {
    expect(await expectFailure(await sendRaw('application/json', '{"topUpId": 1,'), 400)).toBe('The request body is not a valid JSON object.');
  });

  it('answers 400 naming JSON and forms for another content type', async () => {
    expect(await expectFailure(await sendRaw('text/plain', 'topUpId=1'), 400)).toBe('Unsupported content type. Send application/json or a form body.');
  });
});

describe('A12 validation (C4, C5) and refusals', () => {
  it('requires both arrays', async () => {
    const { api } = await buyer(app);
    expect(await expectFailure(await api.postJson('/api/card/make-order', {}), 422)).toEqual([
      'The service ids field is required.',
      'The quantities field is required.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { serviceIds: [], quantity: [] }), 422)).toEqual([
      'The service ids field is required.',
      'The quantities field is required.',
    ]);
  });

  it('refuses non-positive quantities, too large quantities and unequal lengths', async () => {
    const { api } = await buyer(app);
    const card = await createCard(app.services.db);
    const id = card.services[0]!.id;
    const before = await footprint();
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [0] }), 422)).toEqual([
      'The quantities field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: ['a'], quantities: [1.5] }), 422)).toEqual([
      'The service ids field must be a positive integer.',
      'The quantities field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [6] }), 422)).toEqual([
      'The quantities field must not be greater than 5.',
    ]);
    // Every failing field at once (spec §7.3): an unknown service beside a quantity past the limit or a field the schema refuses.
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [999_999], quantities: [6] }), 422)).toEqual([
      'The selected service ids is invalid.',
      'The quantities field must not be greater than 5.',
    ]);
    expect(await expectFailure(await api.postForm('/api/card/make-order', { 'service_ids[]': '999999', 'quantities[]': '6', max_price: 'x' }), 422)).toEqual([
      'The max price field must be a number with at most 2 decimals.',
      'The selected service ids is invalid.',
      'The quantities field must not be greater than 5.',
    ]);
    // One message per field: a field the schema refused is not judged again.
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [999_998, 999_999], quantities: [1] }), 422)).toEqual([
      'The service ids and quantities fields must have the same number of items.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id, id], quantities: [1] }), 422)).toEqual([
      'The service ids and quantities fields must have the same number of items.',
    ]);
    // Repeated ids are merged, and the merged line is held to the same limit.
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id, id], quantities: [3, 3] }), 422)).toEqual([
      'The quantities field must not be greater than 5.',
    ]);
    // However large, a quantity over the limit is refused by the limit, in JSON and in a form.
    for (const quantity of [99_999_999_999, 2_147_483_648, 1e300]) {
      expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [quantity] }), 422)).toEqual([
        'The quantities field must not be greater than 5.',
      ]);
    }
    expect(await expectFailure(await api.postForm('/api/card/make-order', { 'service_ids[]': String(id), 'quantities[]': '99999999999' }), 422)).toEqual([
      'The quantities field must not be greater than 5.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [-99_999_999_999] }), 422)).toEqual([
      'The quantities field must be a positive integer.',
    ]);
    const many = Array.from({ length: 101 }, (_, i) => i + 1);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: many, quantities: many.map(() => 1) }), 422)).toEqual([
      'The service ids field must not have more than 100 items.',
      'The quantities field must not have more than 100 items.',
    ]);
    expect(await footprint()).toEqual(before);
  });

  it('refuses a single value where a JSON body needs a list, in either spelling', async () => {
    const { api } = await buyer(app);
    const id = (await createCard(app.services.db)).services[0]!.id;
    const before = await footprint();
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: id, quantities: 1 }), 422)).toEqual([
      'The service ids field must be an array.',
      'The quantities field must be an array.',
    ]);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { serviceIds: String(id), quantity: [1] }), 422)).toEqual([
      'The service ids field must be an array.',
    ]);
    expect(await footprint()).toEqual(before);
  });

  it('takes a list of one from a form, as a field sent once with or without []', async () => {
    const { api } = await buyer(app);
    const id = String((await createCard(app.services.db)).services[0]!.id);
    const forms: Array<Record<string, string>> = [{ service_ids: id, quantities: '1' }, { 'serviceIds[]': id, 'quantity[]': '1' }, { 'service_ids[0]': id, 'quantities[0]': '1' }];
    for (const fields of forms) {
      expect((await expectJson(await api.postForm('/api/card/make-order', fields), 200)).message.utr).toMatch(/^C/);
    }
  });

  it('refuses unknown and inactive services, and services of an inactive card', async () => {
    const { api } = await buyer(app);
    const card = await createCard(app.services.db, { services: [{}, { status: 0 }] });
    const hidden = await createCard(app.services.db, { status: 0 });
    for (const id of [999_999, card.services[1]!.id, hidden.services[0]!.id]) {
      expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id, id], quantities: [1, 1] }), 422)).toEqual([
        'The selected service ids is invalid.',
      ]);
    }
  });

  it('answers 409 Insufficient balance and writes nothing', async () => {
    const { api } = await buyer(app, '29.99');
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    await createCampaign(app.services.db, { cardServices: [{ serviceId: card.services[0]!.id, price: '10.00', maxSell: 2 }] });
    const before = await footprint();
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [3] }), 409)).toBe(
      'Insufficient balance',
    );
    expect(await footprint()).toEqual(before);
  });
});
