import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newUtr, placeOrder } from '../../src/modules/orders/service.js';
import { buyer, expectFailure, expectJson, tokenFor } from '../helpers/api.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const UTR = /^[TC][0-9A-Z]{9}[0-9A-F]{16}$/;

const orderFields = [
  { field_value: 'Player ID', field_name: 'User_Id', field_placeholder: 'Your ID', field_note: '', field_type: 'text' as const },
  {
    field_value: 'Server',
    field_name: 'Zone_Name',
    field_placeholder: 'Pick one',
    field_note: '',
    field_type: 'select' as const,
    option: { asia: 'Asia', europe: 'Europe' },
  },
];

async function ledger(accountId: number) {
  return app.services.sql`select amount, balance_after, kind, order_id from balance_ledger where account_id = ${accountId} order by id`;
}

describe('A6 top-up/make-order', () => {
  it.each([
    ['form-encoded', 'form'],
    ['JSON', 'json'],
    ['multipart', 'multipart'],
  ] as const)('places an order from a %s body, debits the balance and writes the ledger', async (_, encoding) => {
    const { keys, api } = await buyer(app, '100.00');
    const topUp = await createTopUp(app.services.db, {
      orderFields,
      services: [{ price: '20.00', discount: '10', discountType: 'percentage' }],
    });
    const fields = { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id), User_Id: ' 12345 ', Zone_Name: 'asia' };
    let response: Response;
    if (encoding === 'form') response = await api.postForm('/api/top-up/make-order', fields);
    else if (encoding === 'json') response = await api.postJson('/api/top-up/make-order', { ...fields, topUpId: topUp.id, serviceId: topUp.services[0]!.id });
    else {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      response = await app.request('/api/top-up/make-order', { method: 'POST', headers: { Authorization: await tokenFor(app, keys) }, body: form });
    }
    const body = await expectJson(response, 200);
    expect(Object.keys(body).sort()).toEqual(['message', 'status']);
    expect(body.status).toBe('success');
    const utr = /^Order placed successfully\. Your order number is ([A-Z0-9]+)\.$/.exec(body.message)?.[1];
    expect(utr).toMatch(UTR);
    expect(utr!.startsWith('T')).toBe(true);

    const [order] = await app.services.sql`select * from orders where utr = ${utr!}`;
    expect(order).toMatchObject({
      account_id: keys.id,
      kind: 'top_up',
      top_up_id: topUp.id,
      status: 0,
      total: '18.00',
      currency: 'USD',
      currency_symbol: '$',
      informations: { 'Player ID': '12345', Server: 'asia' },
    });
    const lines = await app.services.sql`select * from order_lines where order_id = ${order!.id}`;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      top_up_service_id: topUp.services[0]!.id,
      card_service_id: null,
      quantity: 1,
      base_price: '20.00',
      discount: '2.00',
      unit_price: '18.00',
      campaign_units: 0,
      campaign_id: null,
      line_total: '18.00',
      codes_owed: 0,
    });
    const [account] = await app.services.sql`select balance from accounts where id = ${keys.id}`;
    expect(account!.balance).toBe('82.00');
    expect((await ledger(keys.id)).slice(1)).toEqual([
      { amount: '-18.00', balance_after: '82.00', kind: 'order_debit', order_id: order!.id },
    ]);
  });

  it('hands the order to the fulfilment queue under its utr', async () => {
    const { api } = await buyer(app);
    const topUp = await createTopUp(app.services.db);
    const response = await api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id });
    const body = await expectJson(response, 200);
    const utr = /number is (\S+)\.$/.exec(body.message)![1]!;
    const job = await app.services.queues.fulfilment.getJob(utr);
    const [order] = await app.services.sql`select id from orders where utr = ${utr}`;
    // The request id goes along, so the job's log lines name the request that placed the order.
    expect(job?.data).toEqual({ orderId: Number(order!.id), utr, requestId: response.headers.get('x-request-id') });
  });

  it('sells a campaign top-up service at the campaign price and counts the unit', async () => {
    const { store } = await buyer(app);
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    const campaign = await createCampaign(app.services.db, {
      topUpServices: [{ serviceId: topUp.services[0]!.id, price: '8.00', discount: '1.00', maxSell: 5 }],
    });
    await store.POST('/api/top-up/make-order', { body: { topUpId: topUp.id, serviceId: topUp.services[0]!.id } });
    const [line] = await app.services.sql`select * from order_lines where top_up_service_id = ${topUp.services[0]!.id}`;
    expect(line).toMatchObject({ campaign_units: 1, campaign_unit_price: '7.00', campaign_id: campaign.id, line_total: '7.00', base_price: '10.00', unit_price: '10.00' });
    const [service] = await app.services.sql`select offered_sell from top_up_services where id = ${topUp.services[0]!.id}`;
    expect(service!.offered_sell).toBe(1);
  });
  it('sells at the regular price once the campaign is over, even before the service is restored', async () => {
    const { store } = await buyer(app);
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    const ended = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    await createCampaign(app.services.db, {
      start: '2020-01-01',
      end: ended,
      topUpServices: [{ serviceId: topUp.services[0]!.id, price: '5.00', maxSell: 5 }],
    });
    await store.POST('/api/top-up/make-order', { body: { topUpId: topUp.id, serviceId: topUp.services[0]!.id } });
    const [line] = await app.services.sql`select campaign_units, campaign_id, line_total from order_lines where top_up_service_id = ${topUp.services[0]!.id}`;
    expect(line).toEqual({ campaign_units: 0, campaign_id: null, line_total: '10.00' });
    const [service] = await app.services.sql`select offered_sell, is_offered from top_up_services where id = ${topUp.services[0]!.id}`;
    expect(service).toEqual({ offered_sell: 0, is_offered: 1 });
  });
});

describe('A12 card/make-order', () => {
  it.each([
    ['JSON with service_ids/quantities', 'json', 'service_ids', 'quantities'],
    ['JSON with serviceIds/quantity', 'json', 'serviceIds', 'quantity'],
    ['form with service_ids[]/quantities[]', 'form', 'service_ids[]', 'quantities[]'],
    ['form with serviceIds[]/quantity[]', 'form', 'serviceIds[]', 'quantity[]'],
  ] as const)('places an order from %s', async (_, encoding, idsKey, qtyKey) => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{ price: '5.00' }, { price: '12.50', discount: '2.50' }] });
    const [a, b] = card.services;
    const response =
      encoding === 'json'
        ? await api.postJson('/api/card/make-order', { [idsKey]: [a!.id, b!.id], [qtyKey]: [2, 3] })
        : await api.postForm('/api/card/make-order', { [idsKey]: [String(a!.id), String(b!.id)], [qtyKey]: ['2', '3'] });
    const body = await expectJson(response, 200);
    expect(body).toEqual({ status: 'success', message: { utr: expect.stringMatching(UTR) } });
    expect(body.message.utr.startsWith('C')).toBe(true);

    const [order] = await app.services.sql`select * from orders where utr = ${body.message.utr}`;
    expect(order).toMatchObject({ account_id: keys.id, kind: 'card', top_up_id: null, status: 0, total: '40.00', informations: null });
    const lines = await app.services.sql`select * from order_lines where order_id = ${order!.id} order by id`;
    expect(lines.map((l) => [l.card_service_id, l.card_id, l.quantity, l.base_price, l.discount, l.unit_price, l.line_total, l.codes_owed])).toEqual([
      [a!.id, card.id, 2, '5.00', '0.00', '5.00', '10.00', 2],
      [b!.id, card.id, 3, '12.50', '2.50', '10.00', '30.00', 3],
    ]);
    const [account] = await app.services.sql`select balance from accounts where id = ${keys.id}`;
    expect(account!.balance).toBe('60.00');
    expect((await ledger(keys.id)).slice(1)).toEqual([{ amount: '-40.00', balance_after: '60.00', kind: 'order_debit', order_id: order!.id }]);
  });

  it('places a card order in one statement, the catalog check included', async () => {
    const { api } = await buyer(app);
    const card = await createCard(app.services.db, { services: [{}, {}] });
    const spy = vi.spyOn(app.services.sql, 'unsafe');
    try {
      await expectJson(await api.postJson('/api/card/make-order', { service_ids: card.services.map((s) => s.id), quantities: [1, 2] }), 200);
      const catalogReads = spy.mock.calls.map(([text]) => String(text)).filter((text) => /\bcard_services\b/.test(text));
      expect(catalogReads).toHaveLength(1);
      expect(catalogReads[0]).toMatch(/insert into orders/);
    } finally {
      spy.mockRestore();
    }
  });

  it('merges repeated service ids into one line', async () => {
    const { store } = await buyer(app);
    const card = await createCard(app.services.db);
    const id = card.services[0]!.id;
    const { data } = await store.POST('/api/card/make-order', { body: { service_ids: [id, id], quantities: [1, 2] } });
    const lines = await app.services.sql`select l.quantity, l.line_total from order_lines l join orders o on o.id = l.order_id where o.utr = ${data.message.utr}`;
    expect(lines).toEqual([{ quantity: 3, line_total: '30.00' }]);
  });

  it('sells campaign units up to max_sell and the rest at the regular old_data price', async () => {
    const { keys, store } = await buyer(app);
    const card = await createCard(app.services.db, { services: [{ price: '10.00', discount: '10', discountType: 'percentage' }] });
    const service = card.services[0]!;
    const campaign = await createCampaign(app.services.db, {
      cardServices: [{ serviceId: service.id, price: '6.00', discount: '1.00', maxSell: 3 }],
    });
    const order = async (quantity: number) => (await store.POST('/api/card/make-order', { body: { service_ids: [service.id], quantities: [quantity] } })).data;
    const first = await order(2);
    const second = await order(4);
    const third = await order(1);
    const rows = await app.services.sql`
      select o.utr, o.total, l.campaign_units, l.campaign_unit_price, l.campaign_id, l.unit_price, l.line_total
      from orders o join order_lines l on l.order_id = o.id where o.account_id = ${keys.id} order by o.id`;
    // Campaign unit 5.00; regular unit 10.00 − 10 % = 9.00.
    expect(rows).toEqual([
      { utr: first.message.utr, total: '10.00', campaign_units: 2, campaign_unit_price: '5.00', campaign_id: campaign.id, unit_price: '9.00', line_total: '10.00' },
      { utr: second.message.utr, total: '32.00', campaign_units: 1, campaign_unit_price: '5.00', campaign_id: campaign.id, unit_price: '9.00', line_total: '32.00' },
      { utr: third.message.utr, total: '9.00', campaign_units: 0, campaign_unit_price: null, campaign_id: null, unit_price: '9.00', line_total: '9.00' },
    ]);
    const [after] = await app.services.sql`select offered_sell, max_sell from card_services where id = ${service.id}`;
    expect(after).toEqual({ offered_sell: 3, max_sell: 3 });
  });
});

describe('the placement statement checks the catalog itself', () => {
  /** What an account has written: orders, their lines, debits and Idempotency-Key claims. */
  async function written(accountId: number) {
    const [row] = await app.services.sql`
      select (select count(*) from orders where account_id = ${accountId})::int as orders,
             (select count(*) from order_lines l join orders o on o.id = l.order_id where o.account_id = ${accountId})::int as lines,
             (select count(*) from balance_ledger where account_id = ${accountId} and kind = 'order_debit')::int as debits,
             (select count(*) from idempotency_keys where account_id = ${accountId})::int as keys`;
    return row;
  }

  // A top-up order's read of the catalog comes before its statement: a service taken off sale in between, or named
  // with another top-up, must still find nothing written.
  it('writes nothing, Idempotency-Key claim included, for a top-up service not of the top-up ordered or taken off sale', async () => {
    const { keys } = await buyer(app, '100.00');
    const first = await createTopUp(app.services.db, { services: [{ price: '5.00' }, { price: '6.00', status: 0 }] });
    const other = await createTopUp(app.services.db, { services: [{ price: '5.00' }] });
    const order = (topUpId: number, serviceId: number) =>
      placeOrder(app.services.db, {
        accountId: keys.id,
        kind: 'top_up',
        utr: newUtr('top_up'),
        topUpId,
        informations: {},
        fields: [],
        lines: [{ serviceId, quantity: 1 }],
        idempotency: { key: `k-${serviceId}`, endpoint: 'top-up/make-order', digest: Buffer.alloc(32) },
      });
    expect(await order(first.id, other.services[0]!.id)).toEqual({ kind: 'unorderable' });
    expect(await order(first.id, first.services[1]!.id)).toEqual({ kind: 'unorderable' });
    await app.services.sql`update top_ups set status = 0 where id = ${other.id}`;
    expect(await order(other.id, other.services[0]!.id)).toEqual({ kind: 'unorderable' });
    expect(await written(keys.id)).toEqual({ orders: 0, lines: 0, debits: 0, keys: 0 });
    expect(await order(first.id, first.services[0]!.id)).toMatchObject({ kind: 'placed' });
    expect(await written(keys.id)).toEqual({ orders: 1, lines: 1, debits: 1, keys: 1 });
  });

  it('refuses a card service of a category taken off sale, and its Idempotency-Key places the order once the category is back', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    const headers = { 'Idempotency-Key': 'category-back' };
    await app.services.sql`update categories set status = 0 where id = ${card.categoryId}`;
    expect(await expectFailure(await api.postJson('/api/card/make-order', body, headers), 422)).toEqual(['The selected service ids is invalid.']);
    expect(await written(keys.id)).toEqual({ orders: 0, lines: 0, debits: 0, keys: 0 });
    await app.services.sql`update categories set status = 1 where id = ${card.categoryId}`;
    await expectJson(await api.postJson('/api/card/make-order', body, headers), 200);
    expect(await written(keys.id)).toEqual({ orders: 1, lines: 1, debits: 1, keys: 1 });
  });
});
