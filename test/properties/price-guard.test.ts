/**
 * C24's price guard, model-based: fast-check command sequences against the real service (an API on its own database,
 * orders through HTTP, prices changed and the campaign paused and run again through the admin API). A model knows every
 * price, the campaign units left (C9: at most max_sell at its price, however often it is paused) and the balance, and
 * so what each order costs; after every command the service must agree with it: an order above its max_price refused
 * with both figures and nothing moved, one within it placed and debited exactly, a replay under an Idempotency-Key
 * never debited twice, the ledger always summing to the balance.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromCents, toCents } from '../../src/lib/money.js';
import { adminOf, buyer, expectFailure, expectJson } from '../helpers/api.js';
import { createCampaign, createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const CAMPAIGN_UNIT = 500;
const CAMPAIGN_MAX_SELL = 4;

type Model = {
  /** Regular unit prices in cents by service position; position 0 is also in a campaign. */
  prices: number[];
  campaignLeft: number;
  /** Whether the campaign runs (an operator may pause it and run it again: C9, its count goes on where it stopped). */
  campaignOn: boolean;
  balance: number;
  orders: number;
  /** Orders placed under an Idempotency-Key: the request and its utr. */
  keyed: Array<{ key: string; body: Record<string, unknown>; utr: string }>;
};
type Real = { api: Awaited<ReturnType<typeof buyer>>['api']; accountId: number; serviceIds: number[]; campaignId: number };
type Line = { service: number; quantity: number };

/** What the model says an order costs: campaign units first at the campaign price, the rest at the regular one. */
function cost(m: Model, lines: Line[]): { total: number; campaignUnits: number } {
  let total = 0;
  let campaignUnits = 0;
  for (const { service, quantity } of lines) {
    const campaign = service === 0 && m.campaignOn ? Math.min(quantity, m.campaignLeft) : 0;
    campaignUnits += campaign;
    total += campaign * CAMPAIGN_UNIT + (quantity - campaign) * m.prices[service]!;
  }
  return { total, campaignUnits };
}

class PlaceOrder implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly lines: Line[],
    /** max_price as the total plus this many cents (none: no max_price). */
    readonly margin: number | null,
    readonly key: string | null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { total, campaignUnits } = cost(m, this.lines);
    const maxPrice = this.margin === null ? undefined : fromCents(Math.max(0, total + this.margin));
    const body = { service_ids: this.lines.map((l) => r.serviceIds[l.service]), quantities: this.lines.map((l) => l.quantity), ...(maxPrice ? { max_price: maxPrice } : {}) };
    const response = await r.api.postJson('/api/card/make-order', body, this.key ? { 'Idempotency-Key': this.key } : {});
    const kept = m.keyed.find((k) => k.key === this.key);
    if (kept) {
      // The key placed an order already: this is its replay, or another request under it.
      if (JSON.stringify(kept.body) === JSON.stringify(body)) expect((await expectJson(response, 200)).message.utr).toBe(kept.utr);
      else expect(await expectFailure(response, 409)).toBe('This Idempotency-Key was used with a different request.');
    } else if (maxPrice !== undefined && toCents(maxPrice) < total) {
      expect(await expectFailure(response, 409)).toBe(`The order costs ${fromCents(total)} USD, above max_price ${maxPrice}.`);
    } else if (total > m.balance) {
      expect(await expectFailure(response, 409)).toBe('Insufficient balance');
    } else {
      const placed = await expectJson(response, 200);
      m.balance -= total;
      m.campaignLeft -= campaignUnits;
      m.orders += 1;
      if (this.key) m.keyed.push({ key: this.key, body, utr: placed.message.utr });
    }
    await agrees(m, r);
  }
  toString = () => `order ${JSON.stringify(this.lines)} max_price ${this.margin === null ? 'none' : `total${this.margin >= 0 ? '+' : ''}${this.margin}¢`}${this.key ? ` key ${this.key}` : ''}`;
}

/** The same request again under its key: the first order's answer, nothing debited; another max_price is a conflict. */
class Replay implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly which: number,
    readonly otherLimit: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.keyed.length > 0;
  async run(m: Model, r: Real) {
    const kept = m.keyed[this.which % m.keyed.length]!;
    const body = this.otherLimit ? { ...kept.body, max_price: '999999.99' } : kept.body;
    const response = await r.api.postJson('/api/card/make-order', body, { 'Idempotency-Key': kept.key });
    if (this.otherLimit) expect(await expectFailure(response, 409)).toBe('This Idempotency-Key was used with a different request.');
    else expect((await expectJson(response, 200)).message.utr).toBe(kept.utr);
    await agrees(m, r);
  }
  toString = () => `replay ${this.which}${this.otherLimit ? ' with another max_price' : ''}`;
}

/** An operator reprices a service through the admin API: the next order costs the new price. */
class Reprice implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly service: number,
    readonly cents: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await expectJson(await adminOf(app)('PATCH', `/card-services/${r.serviceIds[this.service]}`, { price: fromCents(this.cents) }), 200);
    m.prices[this.service] = this.cents;
  }
  toString = () => `service ${this.service} costs ${fromCents(this.cents)}`;
}

/** An operator pauses the campaign or runs it again through the admin API: the units it sold stay counted. */
class SwitchCampaign implements fc.AsyncCommand<Model, Real> {
  constructor(readonly on: boolean) {}
  check = (m: Readonly<Model>) => m.campaignOn !== this.on;
  async run(m: Model, r: Real) {
    await expectJson(await adminOf(app)('PATCH', `/campaigns/${r.campaignId}`, { status: this.on ? 1 : 0 }), 200);
    m.campaignOn = this.on;
    await agrees(m, r);
  }
  toString = () => (this.on ? 'campaign runs again' : 'campaign paused');
}

/** The balance, the campaign counter, the number of orders and the ledger are what the model says. */
async function agrees(m: Model, r: Real) {
  const [row] = await app.services.sql`
    select a.balance,
           (select offered_sell from card_services where id = ${r.serviceIds[0]!}) as offered,
           (select count(*)::int from orders where account_id = a.id) as orders,
           (select sum(amount) from balance_ledger where account_id = a.id) as ledger
    from accounts a where a.id = ${r.accountId}`;
  expect({ balance: row!.balance, offered: row!.offered, orders: row!.orders, ledger: row!.ledger }).toEqual({
    balance: fromCents(m.balance),
    offered: CAMPAIGN_MAX_SELL - m.campaignLeft,
    orders: m.orders,
    ledger: fromCents(m.balance),
  });
}

const line = fc.record({ service: fc.integer({ min: 0, max: 2 }), quantity: fc.integer({ min: 1, max: 3 }) });
const commands = fc.commands(
  [
    fc
      .tuple(fc.uniqueArray(line, { minLength: 1, maxLength: 3, selector: (l) => l.service }), fc.option(fc.constantFrom(-100, -1, 0, 1, 250), { nil: null }), fc.option(fc.constantFrom('k1', 'k2', 'k3', 'k4'), { nil: null }))
      .map(([lines, margin, key]) => new PlaceOrder(lines, margin, key)),
    fc.tuple(fc.nat(), fc.boolean()).map(([which, otherLimit]) => new Replay(which, otherLimit)),
    // The services outside the campaign (a campaign service's regular price is the campaign's to keep).
    fc.tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 4000 })).map(([service, cents]) => new Reprice(service, cents)),
    fc.boolean().map((on) => new SwitchCampaign(on)),
  ],
  { maxCommands: 12 },
);

describe('the price guard (C24), model-based', () => {
  it('an order is placed exactly when it costs at most its max_price and the balance, debited exactly once, and at most max_sell units at the campaign price', { timeout: 120_000 }, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        const { keys, api } = await buyer(app, '120.00');
        const card = await createCard(app.services.db, { services: [{ price: '10.00' }, { price: '3.35' }, { price: '19.99' }] });
        const campaign = await createCampaign(app.services.db, { cardServices: [{ serviceId: card.services[0]!.id, price: '6.00', discount: '1.00', maxSell: CAMPAIGN_MAX_SELL }] });
        const model: Model = { prices: [1000, 335, 1999], campaignLeft: CAMPAIGN_MAX_SELL, campaignOn: true, balance: 12000, orders: 0, keyed: [] };
        await fc.asyncModelRun(() => ({ model, real: { api, accountId: keys.id, serviceIds: card.services.map((s) => s.id), campaignId: campaign.id } }), sequence);
        sequences += 1;
      }),
      { numRuns: 40, seed: Number(process.env.PRICE_GUARD_SEED ?? Date.now() % 2 ** 31) },
    );
    expect(sequences).toBe(40);
  });
});
