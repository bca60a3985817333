/**
 * C24: what one account pays. Price tiers (a percent off the catalog price, and prices of their own) and account
 * currencies at an operator's rate, shown by every catalog read and charged by every order of the account; the rate
 * kept on the order, its entries, its webhooks and the margin report; refunds of exactly what was debited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, client, expectFailure, successMessage, tokenFor, type Json } from '../helpers/api.js';
import { createCampaign, createCard, createOrder, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';
import { sql } from 'drizzle-orm';
import { adjustBalance } from '../../src/modules/accounts/service.js';
import { changeAccountPrices } from '../../src/modules/prices/service.js';

let app: TestApp;
let writes: () => Promise<number>;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);
const ok = successMessage;

beforeAll(async () => {
  app = await startTestApp();
  writes = (await watchWrites(app.services.sql)).count;
  await ok(admin('PUT', '/currencies/EUR', { rate: '0.92', symbol: '€' }));
});
afterAll(async () => app?.close());

let names = 0;
const newTier = (body: Json = {}) => ok(admin('POST', '/price-tiers', { name: `Tier ${++names}`, ...body }));

/** A new account opened through the admin API (in `currency`, on `tier`), with `balance`, signed in. */
async function account({ balance = '100.00', currency, tier }: { balance?: string; currency?: string; tier?: number } = {}) {
  const keys = await ok(admin('POST', '/accounts', { firstname: 'Shop', lastname: 'Owner', balance, ...(currency ? { currency } : {}) }));
  if (tier !== undefined) await ok(admin('PATCH', `/accounts/${keys.id}`, { price_tier_id: tier }));
  return { id: keys.id as number, api: client(app, await tokenFor(app, keys as { publicKey: string; secretKey: string })) };
}

const row = async (table: 'orders' | 'accounts', where: { utr?: string; id?: number }) =>
  where.utr
    ? (await app.services.sql`select * from orders where utr = ${where.utr}`)[0]!
    : (await app.services.sql`select * from ${app.services.sql(table)} where id = ${where.id!}`)[0]!;

type Api = Awaited<ReturnType<typeof account>>['api'];
const cardServices = async (api: Api, cardId: number) => (await ok(api.get(`/api/card/services?card_id=${cardId}`))).services as Json[];
const buyCards = async (api: Api, lines: Array<[number, number]>, extra: Json = {}) =>
  (await ok(api.postJson('/api/card/make-order', { service_ids: lines.map(([id]) => id), quantities: lines.map(([, n]) => n), ...extra }))).utr as string;

describe('price tiers', () => {
  it("a tier's percent off is what its accounts see and pay; an account with no tier sees the catalog, each its own ETag", async () => {
    const tier = await newTier({ percent_off: 10 });
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }, { price: '0.05' }] });
    const [a, b] = card.services;
    const plain = await account();
    const tiered = await account({ tier: tier.id });

    // Twice each: the second answer comes from the cached lane, which keeps one variant per tier.
    for (let i = 0; i < 2; i++) {
      expect((await cardServices(plain.api, card.id)).map((s) => s.price)).toEqual([10, 0.05]);
      expect((await cardServices(tiered.api, card.id)).map((s) => s.price)).toEqual([9, 0.05]); // 0.045 rounds half-up
    }
    const etag = async (api: Api) => (await api.get(`/api/card/services?card_id=${card.id}`)).headers.get('etag');
    expect(await etag(plain.api)).not.toBe(await etag(tiered.api));
    const details = await ok(tiered.api.get(`/api/card/details?card_id=${card.id}`));
    expect(details.services.map((s: Json) => s.price)).toEqual([9, 0.05]);

    const utr = await buyCards(tiered.api, [[a!.id, 2], [b!.id, 1]]);
    expect((await row('orders', { utr })).total).toBe('18.05');
    expect((await row('accounts', { id: tiered.id })).balance).toBe('81.95');
    const lines = await app.services.sql`select base_price, unit_price, line_total from order_lines where order_id = (select id from orders where utr = ${utr}) order by id`;
    expect(lines.map((l) => [l.base_price, l.unit_price, l.line_total])).toEqual([['9.00', '9.00', '18.00'], ['0.05', '0.05', '0.05']]);
  });

  it("a tier's own price replaces the catalog price, C6's discount applies to it, and the top-up details show it", async () => {
    const tier = await newTier({ percent_off: 50 });
    const topUp = await createTopUp(app.services.db, { services: [{ price: '20.00', discount: '1.00', discountType: 'flat' }, { price: '10.00', discount: '10', discountType: 'percentage' }] });
    const [own, halved] = topUp.services;
    const priced = await ok(admin('PUT', `/price-tiers/${tier.id}/prices`, [{ kind: 'top_up', service_id: own!.id, price: '15.00' }]));
    expect(priced.prices).toEqual([{ kind: 'top_up', service_id: own!.id, price: '15.00' }]);
    const { api, id } = await account({ tier: tier.id });

    const [slug] = (await app.services.sql`select slug from top_ups where id = ${topUp.id}`).map((r) => r.slug as string);
    const shown = (await ok(api.get(`/api/top-up/details?slug=${slug}`))).topUp.active_services as Json[];
    const figures = (s: Json) => [s.price, s.discount, s.discountedAmount, s.discountedPriceWithoutDiscount];
    expect(shown.map(figures)).toEqual([
      [15, 1, 1, 14], // its own price less the flat discount
      [5, 10, 0.5, 4.5], // half the catalog price, less 10 %
    ]);
    const [categoryId] = (await app.services.sql`select category_id from top_ups where id = ${topUp.id}`).map((r) => r.category_id as number);
    const listed = (await ok(api.get(`/api/top-up/list?category_id=${categoryId}`))).items[0];
    expect(listed.services.map((s: Json) => s.price)).toEqual([15, 5]);
    expect((await ok(api.get(`/api/topup/services?top_up_id=${topUp.id}`))).services.map((s: Json) => s.price)).toEqual([15, 5]);
    const placed = (await ok(api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: own!.id }))) as unknown as string;
    const utr = placed.split(' ').at(-1)!.replace(/\.$/, '');
    expect((await row('orders', { utr })).total).toBe('14.00');
    expect((await row('accounts', { id })).balance).toBe('86.00');
    // An empty list takes the tier's own prices away.
    expect((await ok(admin('PUT', `/price-tiers/${tier.id}/prices`, []))).prices).toEqual([]);
    expect((await ok(api.get(`/api/top-up/details?slug=${slug}`))).topUp.active_services[0].price).toBe(10);
    void halved;
  });

  it("a campaign's price is the same for everyone: its units at the campaign price, the rest at the tier's", async () => {
    const tier = await newTier({ percent_off: 20 });
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    await createCampaign(app.services.db, { cardServices: [{ serviceId: service.id, price: '7.00', maxSell: 2 }] });
    const { api } = await account({ tier: tier.id });
    const [shown] = await cardServices(api, card.id);
    expect([shown!.price, shown!.old_data.price, shown!.campaign_data.price]).toEqual([7, '8.00', '7.00']);
    const campaignShown = (await ok(api.get('/api/get-campaign'))).campaign.cards.find((s: Json) => s.id === service.id);
    expect([campaignShown.price, campaignShown.old_data.price]).toEqual([7, '8.00']);
    // Two units at 7.00, one at the tier's 8.00.
    const utr = await buyCards(api, [[service.id, 3]]);
    expect((await row('orders', { utr })).total).toBe('22.00');
  });

  it('moving an account to another tier (or none) prices its next request anywhere in the process the new way', async () => {
    const tier = await newTier({ percent_off: 25 });
    const card = await createCard(app.services.db, { services: [{ price: '8.00' }] });
    const { api, id } = await account();
    for (let i = 0; i < 2; i++) expect((await cardServices(api, card.id))[0]!.price).toBe(8);
    expect(await ok(admin('PATCH', `/accounts/${id}`, { price_tier_id: tier.id }))).toEqual({ id, price_tier_id: tier.id, currency: 'USD', currency_symbol: '$', allowed_ips: [] });
    expect((await cardServices(api, card.id))[0]!.price).toBe(6);
    await ok(admin('PATCH', `/price-tiers/${tier.id}`, { percent_off: '12.5' }));
    expect((await cardServices(api, card.id))[0]!.price).toBe(7);
    await ok(admin('PATCH', `/accounts/${id}`, { price_tier_id: null }));
    expect((await cardServices(api, card.id))[0]!.price).toBe(8);
    const listed = (await ok(admin('GET', '/price-tiers'))).find((t: Json) => t.id === tier.id);
    expect(listed).toMatchObject({ name: tier.name, percent_off: '12.50', accounts: 0, prices: [] });
  });
});

describe('account currencies', () => {
  it('an account in EUR sees prices at the rate after its tier, pays in EUR, and its order keeps the rate', async () => {
    const tier = await newTier({ percent_off: 10 });
    const card = await createCard(app.services.db, { services: [{ price: '10.00', discount: '1.00', discountType: 'flat' }] });
    const service = card.services[0]!;
    const eur = await account({ currency: 'EUR' });
    const tieredEur = await account({ currency: 'EUR', tier: tier.id });
    // 10.00 × 0.92 = 9.20 less 1.00 × 0.92; with the tier, 9.00 × 0.92 = 8.28 less 0.92.
    expect([(await cardServices(eur.api, card.id))[0]!.price, (await cardServices(eur.api, card.id))[0]!.discount]).toEqual([9.2, 0.92]);
    expect((await cardServices(tieredEur.api, card.id))[0]!.price).toBe(8.28);

    const utr = await buyCards(tieredEur.api, [[service.id, 3]]);
    const order = await row('orders', { utr });
    expect([order.total, order.currency, order.currency_symbol, order.rate]).toEqual(['22.08', 'EUR', '€', '0.92000000']);
    expect((await row('accounts', { id: tieredEur.id })).balance).toBe('77.92');
    const [entry] = await app.services.sql`select amount, currency from balance_ledger where order_id = ${order.id}`;
    expect([entry!.amount, entry!.currency]).toEqual(['-22.08', 'EUR']);

    const listed = (await ok(tieredEur.api.get('/api/get-card/orders'))).data[0];
    expect([listed.price, listed.currency, listed.symbol, listed.rate]).toEqual([22.08, 'EUR', '€', '0.92000000']);
    expect(await ok(admin('GET', `/orders/${utr}`))).toMatchObject({ total: '22.08', currency: 'EUR', rate: '0.92000000' });
    const operatorList = (await ok(admin('GET', '/orders?per_page=100'))).data as Json[];
    expect(operatorList.find((o) => o.utr === utr)).toMatchObject({ price: '22.08', currency: 'EUR', symbol: '€', rate: '0.92000000' });
    // An order in the store currency has no rate in its entry at all.
    const plain = await account();
    await buyCards(plain.api, [[service.id, 1]]);
    expect(Object.keys((await ok(plain.api.get('/api/get-card/orders'))).data[0])).not.toContain('rate');

    await expectFailure(await tieredEur.api.postJson('/api/card/make-order', { service_ids: [service.id], quantities: [1], max_price: '7.35' }), 409).then((m) =>
      expect(m).toBe('The order costs 7.36 EUR, above max_price 7.35.'),
    );
  });

  it('a rate change moves new orders only; a refund returns exactly what was debited, never converted again', async () => {
    await ok(admin('PUT', '/currencies/GBP', { rate: 0.8, symbol: '£' }));
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    const { api, id } = await account({ currency: 'GBP', balance: '50.00' });
    const first = await buyCards(api, [[service.id, 1]]);
    const rate = await ok(admin('PUT', '/currencies/GBP', { rate: '0.75', symbol: '£' }));
    expect(rate).toMatchObject({ code: 'GBP', rate: '0.75000000', symbol: '£', base: false });
    const second = await buyCards(api, [[service.id, 1]]);
    expect([(await row('orders', { utr: first })).total, (await row('orders', { utr: first })).rate]).toEqual(['8.00', '0.80000000']);
    expect([(await row('orders', { utr: second })).total, (await row('orders', { utr: second })).rate]).toEqual(['7.50', '0.75000000']);
    expect((await row('accounts', { id })).balance).toBe('34.50');

    const refunded = await ok(admin('POST', `/orders/${first}/refund`, { reason: 'customer asked' }));
    expect(refunded.refunded_amount).toBe('8.00');
    expect((await row('accounts', { id })).balance).toBe('42.50');
    const [credit] = await app.services.sql`select amount, currency from balance_ledger where kind = 'order_refund' and order_id = (select id from orders where utr = ${first})`;
    expect([credit!.amount, credit!.currency]).toEqual(['8.00', 'GBP']);
    expect((await ok(admin('GET', '/currencies'))).map((c: Json) => c.code)).toEqual(['USD', 'EUR', 'GBP']);

    // A new symbol reaches the account's next read at once (its checked token carried the old one).
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    const [slug] = (await app.services.sql`select slug from top_ups where id = ${topUp.id}`).map((r) => r.slug as string);
    const symbol = async () => (await ok(api.get(`/api/top-up/details?slug=${slug}`))).topUp.active_services[0].currency_symbol;
    expect(await symbol()).toBe('£');
    await ok(admin('PUT', '/currencies/GBP', { rate: '0.75', symbol: 'GB£' }));
    expect(await symbol()).toBe('GB£');
  });

  it("an account's currency changes only at a zero balance with no order in progress; its earlier entries keep theirs", async () => {
    const card = await createCard(app.services.db, { services: [{ price: '4.00' }] });
    const { api, id } = await account({ balance: '4.00' });
    // An entry written before entries kept their currency (by the previous release).
    await app.services.sql`update balance_ledger set currency = null where account_id = ${id}`;
    const before = await writes();
    expect(await expectFailure(await admin('PATCH', `/accounts/${id}`, { currency: 'EUR' }), 409)).toBe(
      'The currency of an account can change only at a zero balance with no order in progress.',
    );
    const utr = await buyCards(api, [[card.services[0]!.id, 1]]);
    expect((await row('accounts', { id })).balance).toBe('0.00');
    const placed = await writes();
    // At zero, but the order may still be refunded in dollars.
    expect(await expectFailure(await admin('PATCH', `/accounts/${id}`, { currency: 'EUR' }), 409)).toMatch(/zero balance/);
    expect(await writes()).toBe(placed);
    expect(placed).toBeGreaterThan(before);
    await ok(admin('POST', `/orders/${utr}/refund`, { reason: 'test' }));
    await ok(admin('POST', `/accounts/${id}/balance`, { amount: '-4.00', reason: 'paid out' }));

    expect(await ok(admin('PATCH', `/accounts/${id}`, { currency: 'EUR' }))).toEqual({ id, price_tier_id: null, currency: 'EUR', currency_symbol: '€', allowed_ips: [] });
    const statement = (await ok(api.get('/api/account/statement'))).data as Json[];
    expect(statement.map((e) => e.currency)).toEqual(['USD', 'USD', 'USD', 'USD']);
    await ok(admin('POST', `/accounts/${id}/balance`, { amount: '10.00', reason: 'top up' }));
    expect((await ok(api.get('/api/account/statement'))).data[0]).toMatchObject({ amount: '10.00', currency: 'EUR' });
    expect((await cardServices(api, card.id))[0]!.price).toBe(3.68);
  });

  it("an open test order locks the currency too; the change closes the test balance in the old currency and opens it in the new", async () => {
    const card = await createCard(app.services.db, { services: [{ price: '4.00' }] });
    const { id } = await account({ balance: '0.00' });
    const testKey = await ok(admin('POST', `/accounts/${id}/keys`, { mode: 'test' }));
    const test = client(app, await tokenFor(app, { publicKey: testKey.public_key as string, secretKey: testKey.secret_key as string }));
    const utr = await buyCards(test, [[card.services[0]!.id, 1]]);
    expect(await expectFailure(await admin('PATCH', `/accounts/${id}`, { currency: 'EUR' }), 409)).toMatch(/no order in progress/);
    await ok(admin('POST', `/orders/${utr}/refund`, { reason: 'test' }));
    await ok(admin('POST', `/accounts/${id}/test-balance`, { amount: '250.00' }));

    await ok(admin('PATCH', `/accounts/${id}`, { currency: 'EUR' }));
    expect((await row('accounts', { id })).test_balance).toBe('1000.00');
    const statement = (await ok(test.get('/api/account/statement'))).data as Json[];
    expect(statement.slice(0, 2).map((e) => [e.amount, e.balance_after, e.currency])).toEqual([
      ['1000.00', '1000.00', 'EUR'],
      ['-250.00', '0.00', 'USD'],
    ]);
    // The test order's price is in euros now, paid from the reopened euros.
    await buyCards(test, [[card.services[0]!.id, 1]]);
    expect((await row('accounts', { id })).test_balance).toBe('996.32');
  });

  it('the webhook event of an order in another currency carries the rate; one in the store currency does not', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '5.00' }] });
    for (const currency of ['EUR', 'USD']) {
      const { api, id } = await account({ currency });
      await ok(api.postJson('/api/webhooks', { url: 'https://shop.example.com/hooks', events: ['order.refunded'] }));
      const utr = await buyCards(api, [[card.services[0]!.id, 1]]);
      await ok(admin('POST', `/orders/${utr}/refund`, { reason: 'test' }));
      const [event] = await app.services.sql`select data from webhook_events where account_id = ${id} and type = 'order.refunded'`;
      expect(event!.data).toMatchObject({ utr, price: currency === 'EUR' ? 4.6 : 5, currency });
      if (currency === 'EUR') expect(event!.data.rate).toBe('0.92000000');
      else expect(event!.data).not.toHaveProperty('rate');
    }
  });

  it('the margin report counts sales in the store currency at each order’s own rate, and names the currency and rate', async () => {
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    const serviceId = topUp.services[0]!.id;
    const provider = await ok(admin('POST', '/providers', { name: 'Margin supplier', kind: 'http', base_url: 'https://supplier.example.com', credentials: { secret: 'margin-secret-0123456789' } }));
    const { id } = await account();
    const sold = async (total: string, rate: string | null) => {
      const order = await createOrder(app.services.db, { accountId: id, topUpId: topUp.id, serviceId, unitPrice: total, status: 1 });
      if (rate) await app.services.sql`update orders set currency = 'EUR', currency_symbol = '€', rate = ${rate} where id = ${order.id}`;
      await app.services.sql`
        insert into provider_attempts (order_id, provider_id, product_code, cost, outcome, settled_at, base_url)
        values (${order.id}, ${provider.id}, 'X', 6.00, 'completed', now(), 'https://supplier.example.com')`;
    };
    await sold('10.00', null);
    await sold('9.20', '0.92');
    await sold('9.21', '0.92'); // 10.0108… → 10.01
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const report = await ok(admin('GET', `/reports/margin?from=${from}&to=${to}`));
    expect(report.currency).toBe('USD');
    expect(report.services.filter((s: Json) => s.top_up_service_id === serviceId)).toEqual([
      expect.objectContaining({ currency: 'EUR', rate: '0.92000000', sales_in_currency: '18.41', orders: 2, sales: '20.01', cost: '12.00', margin: '8.01' }),
      expect.objectContaining({ currency: 'USD', orders: 1, sales: '10.00', cost: '6.00', margin: '4.00' }),
    ]);
    expect(report.services.find((s: Json) => s.currency === 'USD' && s.top_up_service_id === serviceId)).not.toHaveProperty('rate');
  });

  it('an order priced before its account changed currency is priced again in the new one, never debited in the old', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const shop = await account({ balance: '100.00' });
    // The operator's change holds the account row from before the order's statement reads it (USD, 100.00) until the
    // account is emptied, moved to EUR and credited: the statement's debit waits for it, then finds the new row.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const operator = app.services.db.transaction(async (tx) => {
      await tx.execute(sql`select id from accounts where id = ${shop.id} for no key update`);
      locked();
      await held;
      await adjustBalance(tx, shop.id, '-100.00', 'adjustment', 'paid out before the currency change');
      await changeAccountPrices(tx, app.services.config, shop.id, { currency: 'EUR' });
      await adjustBalance(tx, shop.id, '20.00', 'deposit', 'deposit in EUR');
    });
    await isLocked;
    const placing = shop.api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] });
    await expect
      .poll(async () => (await app.services.sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%jsonb_to_recordset%'`).length)
      .toBe(1);
    release();
    await operator;
    const utr = (await ok(placing)).utr as string;
    const order = await row('orders', { utr });
    expect([order.total, order.currency, order.rate]).toEqual(['9.20', 'EUR', '0.92000000']);
    expect((await row('accounts', { id: shop.id })).balance).toBe('10.80');
  });
});

describe('refusals (nothing written)', () => {
  const refused = async (response: Promise<Response>, status: number, errors: string | string[]) => {
    const before = await writes();
    expect(await expectFailure(await response, status)).toEqual(errors);
    expect(await writes()).toBe(before);
  };

  it('an order whose converted total is past what any balance can hold is a 409, not a failure of the server', async () => {
    await ok(admin('PUT', '/currencies/LBP', { rate: '89500', symbol: 'L£' }));
    const card = await createCard(app.services.db, { services: [{ price: '99999999.00' }] });
    const shop = await account({ currency: 'LBP', balance: '999999999999.99' });
    const before = await writes();
    expect(await expectFailure(await shop.api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [2] }), 409)).toBe('Insufficient balance');
    expect(await writes()).toBe(before);
  });

  it('tiers: a percent off past 100, a name taken, an unknown service or tier', async () => {
    const tier = await newTier();
    await refused(admin('POST', '/price-tiers', { name: 'Too much', percent_off: '100.01' }), 422, ['The percent off field must not be greater than 100.']);
    await refused(admin('POST', '/price-tiers', { percent_off: 5 }), 422, ['The name field is required.']);
    await refused(admin('POST', '/price-tiers', { name: tier.name }), 422, ['The name has already been taken.']);
    await refused(admin('PATCH', '/price-tiers/999999', { percent_off: 5 }), 404, 'No price tier with id 999999.');
    await refused(admin('PUT', `/price-tiers/${tier.id}/prices`, [{ kind: 'card', service_id: 999_999, price: '1.00' }]), 422, ['The prices.0.service id is invalid.']);
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const same = { kind: 'card', service_id: card.services[0]!.id, price: '1.00' };
    await refused(admin('PUT', `/price-tiers/${tier.id}/prices`, [same, same]), 422, ['The prices.1.service id field has a duplicate value.']);
    await refused(admin('PUT', `/price-tiers/${tier.id}/prices`, [{ ...same, price: '-1' }]), 422, ['The prices.0.price field must be a number with at most 2 decimals.']);
    await refused(admin('PUT', '/price-tiers/999999/prices', []), 404, 'No price tier with id 999999.');
  });

  it('currencies and accounts: the store currency, a rate of 0, an unknown currency or tier', async () => {
    await refused(admin('PUT', '/currencies/USD', { rate: 1, symbol: '$' }), 422, ['The rate of USD, the store currency, is always 1.']);
    await refused(admin('PUT', '/currencies/JPY', { rate: '0', symbol: '¥' }), 422, ['The rate field must be greater than 0.']);
    await refused(admin('PUT', '/currencies/JPY', { rate: '1e3', symbol: '¥' }), 422, ['The rate field must be a number with at most 8 decimals.']);
    await refused(admin('PUT', '/currencies/jpy', { rate: '150', symbol: '¥' }), 404, 'No currency with the code "jpy".');
    await refused(admin('POST', '/accounts', { firstname: 'A', lastname: 'B', currency: 'XYZ' }), 422, ['The selected currency is invalid: the store has no rate for XYZ.']);
    const { id } = await account({ balance: '0' });
    await refused(admin('PATCH', `/accounts/${id}`, { price_tier_id: 999_999 }), 422, ['The selected price tier id is invalid.']);
    await refused(admin('PATCH', `/accounts/${id}`, { currency: 'XYZ' }), 422, ['The selected currency is invalid: the store has no rate for XYZ.']);
    await refused(admin('PATCH', '/accounts/999999', { price_tier_id: null }), 404, 'No account with id 999999.');
  });
});
