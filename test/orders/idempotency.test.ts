import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, client, expectFailure, expectJson, tokenFor } from '../helpers/api.js';
import { requestDigest } from '../../src/modules/orders/service.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

async function counts(accountId: number) {
  const [row] = await app.services.sql`
    select (select count(*) from orders where account_id = ${accountId})::int as orders,
           (select count(*) from balance_ledger where account_id = ${accountId} and kind = 'order_debit')::int as debits,
           (select balance from accounts where id = ${accountId}) as balance`;
  return row;
}

describe('Idempotency-Key (C15)', () => {
  it('answers a repeated card order with the first answer, one order and one debit, whatever the encoding', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db);
    const id = card.services[0]!.id;
    const headers = { 'Idempotency-Key': 'order-0001' };
    const first = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [2] }, headers), 200);
    const again = await expectJson(await api.postJson('/api/card/make-order', { quantity: [2], serviceIds: [id] }, headers), 200);
    const asForm = await expectJson(await api.postForm('/api/card/make-order', { 'service_ids[]': String(id), 'quantities[]': '2' }, headers), 200);
    expect(again).toEqual(first);
    expect(asForm).toEqual(first);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '80.00' });
  });

  it('answers a repeated top-up order with the same message', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const topUp = await createTopUp(app.services.db);
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id };
    const first = await expectJson(await api.postJson('/api/top-up/make-order', body, { 'Idempotency-Key': 'k' }), 200);
    const again = await expectJson(await api.postJson('/api/top-up/make-order', body, { 'Idempotency-Key': 'k' }), 200);
    expect(again).toEqual(first);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '90.00' });
  });

  it('refuses the same key with a different body or on the other endpoint (409)', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db);
    const topUp = await createTopUp(app.services.db);
    const id = card.services[0]!.id;
    const headers = { 'Idempotency-Key': 'same-key' };
    await expectJson(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [1] }, headers), 200);
    expect(await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [id], quantities: [2] }, headers), 409)).toBe(
      'This Idempotency-Key was used with a different request.',
    );
    await expectFailure(await api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id }, headers), 409);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '90.00' });
  });

  it('keeps keys per account: another account may use the same key', async () => {
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    const a = await buyer(app);
    const b = await buyer(app);
    const first = await expectJson(await a.api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'shared' }), 200);
    const second = await expectJson(await b.api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'shared' }), 200);
    expect(second.message.utr).not.toBe(first.message.utr);
  });

  it('places a new order once the key is older than 24 hours', async () => {
    const { keys, api } = await buyer(app);
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    const first = await expectJson(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'old' }), 200);
    await app.services.sql`update idempotency_keys set created_at = now() - interval '25 hours' where account_id = ${keys.id}`;
    const second = await expectJson(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'old' }), 200);
    expect(second.message.utr).not.toBe(first.message.utr);
    expect((await counts(keys.id))!.orders).toBe(2);
  });

  it('leaves no claim when the order fails, so the key can be used again', async () => {
    const { keys, api } = await buyer(app, '5.00');
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    await expectFailure(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'retry-me' }), 409);
    expect((await app.services.sql`select 1 from idempotency_keys where account_id = ${keys.id}`).length).toBe(0);
    await app.services.sql`update accounts set balance = balance + 100 where id = ${keys.id}`;
    await app.services.sql`insert into balance_ledger (account_id, amount, balance_after, kind, currency) values (${keys.id}, 100, 105, 'deposit', 'USD')`;
    await expectJson(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'retry-me' }), 200);
  });

  it('answers a repeat with its first order even once the service is off sale; a new key is refused', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db, { services: [{}, {}] });
    const [sold, other] = card.services.map((s) => s.id) as [number, number];
    const body = { service_ids: [sold], quantities: [1] };
    const first = await expectJson(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'before-off-sale' }), 200);
    await app.services.sql`update card_services set status = 0 where id = ${sold}`;
    expect(await expectJson(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'before-off-sale' }), 200)).toEqual(first);
    await expectFailure(await api.postJson('/api/card/make-order', { service_ids: [sold, other], quantities: [1, 1] }, { 'Idempotency-Key': 'before-off-sale' }), 409);
    expect(await expectFailure(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'after-off-sale' }), 422)).toEqual([
      'The selected service ids is invalid.',
    ]);
    expect(await counts(keys.id)).toMatchObject({ orders: 1, debits: 1 });
  });

  it('answers a repeated top-up order with its first order after its form or its sale changed, the player check asked for or not', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const field = (name: string, label: string) => ({ field_name: name, field_value: label, field_type: 'text' as const, field_placeholder: label, field_note: '' });
    const topUp = await createTopUp(app.services.db, { orderFields: [field('User_Id', 'User id')] });
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id, User_Id: 12345 };
    const headers = { 'Idempotency-Key': 'top-up-before-changes' };
    const first = await expectJson(await api.postJson('/api/top-up/make-order', body, headers), 200);
    // The field renamed, a required field added, then the service taken off sale: each repeat still gets the first order.
    const form = (fields: unknown[]) => app.services.sql`update top_ups set order_information = ${JSON.stringify(fields)}::jsonb where id = ${topUp.id}`;
    await form([field('User_Id', 'Player id')]);
    expect(await expectJson(await api.postJson('/api/top-up/make-order', body, headers), 200)).toEqual(first);
    await form([field('User_Id', 'Player id'), field('Zone_Id', 'Zone id')]);
    expect(await expectJson(await api.postJson('/api/top-up/make-order', { ...body, check_player: true }, headers), 200)).toEqual(first);
    await app.services.sql`update top_up_services set status = 0 where id = ${body.serviceId}`;
    expect(await expectJson(await api.postForm('/api/top-up/make-order', { topUpId: String(body.topUpId), serviceId: String(body.serviceId), User_Id: '12345' }, headers), 200)).toEqual(first);
    // Another request under the key is still refused, and a new key meets today's catalog.
    await expectFailure(await api.postJson('/api/top-up/make-order', { ...body, User_Id: 99 }, headers), 409);
    expect(await expectFailure(await api.postJson('/api/top-up/make-order', body, { 'Idempotency-Key': 'top-up-after-changes' }), 422)).toContain(
      'The selected service id is invalid.',
    );
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '90.00' });
  });

  it('a top-up repeat matches its first request with its price guard as a sum, however written', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const topUp = await createTopUp(app.services.db);
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id };
    const headers = { 'Idempotency-Key': 'guarded-top-up' };
    const first = await expectJson(await api.postJson('/api/top-up/make-order', { ...body, max_price: 10 }, headers), 200);
    expect(await expectJson(await api.postJson('/api/top-up/make-order', { ...body, max_price: '10.00' }, headers), 200)).toEqual(first);
    await expectFailure(await api.postJson('/api/top-up/make-order', { ...body, max_price: '11.00' }, headers), 409);
    await expectFailure(await api.postJson('/api/top-up/make-order', body, headers), 409);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '90.00' });
  });

  it("a top-up key claimed by the release before this one (its digest over the form's labels) still replays", async () => {
    const { keys, api } = await buyer(app, '100.00');
    const topUp = await createTopUp(app.services.db, {
      orderFields: [{ field_name: 'User_Id', field_value: 'User id', field_type: 'text', field_placeholder: '', field_note: '' }],
    });
    const body = { topUpId: topUp.id, serviceId: topUp.services[0]!.id, User_Id: '777' };
    const headers = { 'Idempotency-Key': 'claimed-before' };
    const first = await expectJson(await api.postJson('/api/top-up/make-order', body, headers), 200);
    const earlier = requestDigest('top-up/make-order', { topUpId: body.topUpId, serviceId: body.serviceId, informations: { 'User id': '777' } });
    await app.services.sql`update idempotency_keys set request_digest = ${earlier} where account_id = ${keys.id} and key = 'claimed-before'`;
    expect(await expectJson(await api.postJson('/api/top-up/make-order', body, headers), 200)).toEqual(first);
    await expectFailure(await api.postJson('/api/top-up/make-order', { ...body, User_Id: '778' }, headers), 409);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '90.00' });
  });

  it('a card repeat gets its first order after the quantity limit was lowered below it', async () => {
    const { keys, api } = await buyer(app, '100.00');
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [3] };
    const headers = { 'Idempotency-Key': 'before-the-limit' };
    const first = await expectJson(await api.postJson('/api/card/make-order', body, headers), 200);
    const stricter = await startTestApp({ env: { MAX_QUANTITY_PER_LINE: '2' }, serviceDatabaseUrl: () => app.services.config.DATABASE_URL });
    try {
      const again = client(stricter, await tokenFor(stricter, keys));
      expect(await expectJson(await again.postJson('/api/card/make-order', body, headers), 200)).toEqual(first);
      expect(await expectFailure(await again.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'after-the-limit' }), 422)).toEqual([
        'The quantities field must not be greater than 2.',
      ]);
    } finally {
      await stricter.close();
    }
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '70.00' });
  });

  it('never places two orders for concurrent repeats', async () => {
    const { keys, api } = await buyer(app, '1000.00');
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => api.postJson('/api/card/make-order', body, { 'Idempotency-Key': 'burst' })),
    );
    const bodies = await Promise.all(responses.map((r) => r.json()));
    const utrs = new Set(bodies.filter((b) => b.status === 'success').map((b) => b.message.utr));
    expect(utrs.size).toBe(1);
    for (const [i, r] of responses.entries()) expect(r.status, JSON.stringify(bodies[i])).toBe(200);
    expect(await counts(keys.id)).toEqual({ orders: 1, debits: 1, balance: '990.00' });
  });

  it('refuses an empty or too long key with 422', async () => {
    const { keys, api } = await buyer(app);
    const card = await createCard(app.services.db);
    const body = { service_ids: [card.services[0]!.id], quantities: [1] };
    for (const key of ['', 'x'.repeat(256)]) {
      expect(await expectFailure(await api.postJson('/api/card/make-order', body, { 'Idempotency-Key': key }), 422)).toEqual([
        'The Idempotency-Key header must be between 1 and 255 characters.',
      ]);
    }
    expect((await counts(keys.id))!.orders).toBe(0);
  });
});
