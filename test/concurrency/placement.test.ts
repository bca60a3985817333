import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestAccount, tokenFor } from '../helpers/api.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

async function buyers(count: number, balance: string) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const keys = await createTestAccount(app, balance);
      return { keys, api: client(app, await tokenFor(app, keys)) };
    }),
  );
}

describe('concurrent placement', () => {
  it('sells exactly max_sell campaign units across 100 concurrent card orders', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    await createCampaign(app.services.db, { cardServices: [{ serviceId: service.id, price: '4.00', maxSell: 10 }] });
    const accounts = await buyers(10, '1000.00');
    // Quantities 1–3 so some orders straddle the cap.
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        accounts[i % 10]!.api.postJson('/api/card/make-order', { service_ids: [service.id], quantities: [(i % 3) + 1] }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(100).fill(200));

    const [svc] = await app.services.sql`select offered_sell from card_services where id = ${service.id}`;
    expect(svc!.offered_sell).toBe(10);
    const [sold] = await app.services.sql`
      select sum(campaign_units)::int as campaign_units, sum(quantity)::int as units, sum(line_total)::text as revenue, count(*)::int as lines
      from order_lines where card_service_id = ${service.id}`;
    const units = Array.from({ length: 100 }, (_, i) => (i % 3) + 1).reduce((a, b) => a + b, 0);
    expect(sold).toEqual({ campaign_units: 10, units, revenue: (10 * 4 + (units - 10) * 10).toFixed(2), lines: 100 });
    // Every line is priced consistently with its own split.
    const wrong = await app.services.sql`
      select id from order_lines where card_service_id = ${service.id}
        and line_total <> campaign_units * 4 + (quantity - campaign_units) * 10`;
    expect(wrong).toEqual([]);
  });

  it('never drives a balance below zero, and the ledger always sums to the balance', async () => {
    const topUp = await createTopUp(app.services.db, { services: [{ price: '10.00' }] });
    const { keys, api } = (await buyers(1, '75.00'))[0]!;
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 409)).toHaveLength(23);
    const refusals = await Promise.all(responses.filter((r) => r.status === 409).map((r) => r.json()));
    expect(new Set(refusals.map((b) => b.errors))).toEqual(new Set(['Insufficient balance']));

    const [state] = await app.services.sql`
      select a.balance, (select sum(amount) from balance_ledger where account_id = a.id) as ledger,
             (select count(*)::int from orders where account_id = a.id) as orders,
             a.card_order_count + a.top_up_order_count as counted
      from accounts a where a.id = ${keys.id}`;
    // The account's order counts (the order lists' totals) move with the orders, never apart.
    expect(state).toEqual({ balance: '5.00', ledger: '5.00', orders: 7, counted: 7 });
  });

  it('one account ordering campaign and regular services at once never deadlocks', async () => {
    // A campaign order locks its service and then the account; a regular order of the same account holds the
    // account and checks its lines' foreign keys against the services: the two must not wait on each other.
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }, { price: '3.00' }] });
    const [campaign, regular] = [card.services[0]!, card.services[1]!];
    await createCampaign(app.services.db, { cardServices: [{ serviceId: campaign.id, price: '4.00', maxSell: 1000 }] });
    const { api } = (await buyers(1, '100000.00'))[0]!;
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        api.postJson('/api/card/make-order', { service_ids: i % 2 ? [campaign.id, regular.id] : [regular.id, campaign.id], quantities: [1, 1] }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(120).fill(200));
  });
});
