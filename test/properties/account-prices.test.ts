/**
 * C24's money arithmetic, model-based: fast-check command sequences against the real service (an API on its own
 * database, orders and reads through HTTP, tiers, rates and prices changed through the admin API). The model prices in
 * exact integers (cents, hundredths of a percent, 1e-8 of a rate unit) with the rules of C24 and C6; after every
 * command the service must agree with it to the cent: what the catalog shows the account, what each order debits
 * (the sum of its lines, each line its units at their unit price), the balance and its ledger, and a full refund
 * that gives back exactly the debit whatever the rate has become since.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromCents, toCents } from '../../src/lib/money.js';
import { adminOf, client, successMessage, tokenFor, type Json } from '../helpers/api.js';
import { createCampaign, createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);
const ok = successMessage;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const CAMPAIGN_MAX_SELL = 3;
const OPENING_BALANCE = 9_000_000_000_00; // cents: room for the dearest orders at the highest rate

type Pricing = { price: bigint; discount: bigint; percentage: boolean };
type Model = {
  /** Regular pricing by service position (cents; a percentage discount in hundredths of a percent). */
  services: Pricing[];
  /** Service 0 is in a campaign at this pricing, for CAMPAIGN_MAX_SELL units. */
  campaign: Pricing;
  campaignLeft: number;
  /** The tier: percent off in hundredths, own prices in cents by position. */
  percentOff: bigint;
  overrides: Array<bigint | null>;
  /** The account's rate in 1e-8 units; null in the store currency. */
  rate: bigint | null;
  balance: bigint;
  orders: Array<{ utr: string; total: bigint; refunded: boolean }>;
};
type Real = { api: ReturnType<typeof client>; accountId: number; tierId: number; cardId: number; serviceIds: number[] };

/** n / d rounded half-up, for n ≥ 0: PostgreSQL's round(…, 2) of a non-negative numeric. */
const halfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);
const converted = (m: Model, cents: bigint) => (m.rate === null ? cents : halfUp(cents * m.rate, 100_000_000n));

/** A service's pricing as the account sees it: the tier's price (not for campaign pricing), in its currency. */
function shown(m: Model, position: number, pricing: Pricing, campaign: boolean): Pricing {
  const own = m.overrides[position];
  const base = campaign ? pricing.price : own != null ? own : halfUp(pricing.price * (10_000n - m.percentOff), 10_000n);
  return { price: converted(m, base), discount: pricing.percentage ? pricing.discount : converted(m, pricing.discount), percentage: pricing.percentage };
}

/** C6 on the shown figures: less a percentage (rounded half-up) or a flat amount, never below 0. */
const unit = ({ price, discount, percentage }: Pricing) => {
  const after = percentage ? halfUp(price * (10_000n - discount), 10_000n) : price - discount;
  return after < 0n ? 0n : after;
};

/** What an order's lines cost, in the model: campaign units first at the campaign price. */
function lineTotals(m: Model, lines: Line[]) {
  return lines.map(({ service, quantity }) => {
    const campaignUnits = service === 0 ? Math.min(quantity, m.campaignLeft) : 0;
    const regular = unit(shown(m, service, m.services[service]!, false));
    const offer = unit(shown(m, 0, m.campaign, true));
    return { campaignUnits, total: BigInt(campaignUnits) * offer + BigInt(quantity - campaignUnits) * regular };
  });
}

type Line = { service: number; quantity: number };
const money = (cents: bigint) => fromCents(Number(cents));
const percent = (hundredths: bigint) => fromCents(Number(hundredths));
const rateText = (units: bigint) => `${units / 100_000_000n}.${String(units % 100_000_000n).padStart(8, '0')}`;

class PlaceOrder implements fc.AsyncCommand<Model, Real> {
  constructor(readonly lines: Line[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = lineTotals(m, this.lines);
    const total = expected.reduce((sum, l) => sum + l.total, 0n);
    const placed = await ok(r.api.postJson('/api/card/make-order', { service_ids: this.lines.map((l) => r.serviceIds[l.service]), quantities: this.lines.map((l) => l.quantity) }));
    const [order] = await app.services.sql`
      select o.id, o.total, o.rate::text as rate, (select sum(line_total) from order_lines where order_id = o.id) as lines,
             (select amount from balance_ledger where order_id = o.id and kind = 'order_debit') as debit
      from orders o where o.utr = ${placed.utr}`;
    const lines = await app.services.sql`select quantity, unit_price, campaign_units, campaign_unit_price, line_total from order_lines where order_id = ${order!.id} order by id`;
    // The debit is the sum of the lines; each line its units at their unit prices.
    expect({ total: order!.total, lines: order!.lines, debit: order!.debit, rate: order!.rate }).toEqual({
      total: money(total),
      lines: money(total),
      debit: money(-total),
      rate: m.rate === null ? null : rateText(m.rate),
    });
    for (const line of lines) {
      const regularUnits = BigInt(line.quantity - line.campaign_units);
      const campaignCents = line.campaign_unit_price === null ? 0n : BigInt(line.campaign_units) * BigInt(toCents(line.campaign_unit_price));
      expect(money(regularUnits * BigInt(toCents(line.unit_price)) + campaignCents)).toBe(line.line_total);
    }
    expect(lines.map((l) => l.line_total)).toEqual(expected.map((l) => money(l.total)));
    m.balance -= total;
    m.campaignLeft -= expected.reduce((n, l) => n + l.campaignUnits, 0);
    m.orders.push({ utr: placed.utr, total, refunded: false });
    await agrees(m, r);
  }
  toString = () => `order ${JSON.stringify(this.lines)}`;
}

/** An operator refunds one of the orders not yet refunded: exactly its debit comes back, whatever the rate is now. */
class Refund implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check = (m: Readonly<Model>) => m.orders.some((o) => !o.refunded);
  async run(m: Model, r: Real) {
    const open = m.orders.filter((o) => !o.refunded);
    const order = open[this.which % open.length]!;
    const refunded = await ok(admin('POST', `/orders/${order.utr}/refund`, { reason: 'property' }));
    expect(refunded.refunded_amount).toBe(money(order.total));
    order.refunded = true;
    m.balance += order.total;
    // The order's campaign units go back to the campaign.
    const [line] = await app.services.sql`select coalesce(sum(campaign_units), 0)::int as n from order_lines where order_id = (select id from orders where utr = ${order.utr})`;
    m.campaignLeft += line!.n as number;
    await agrees(m, r);
  }
  toString = () => `refund ${this.which}`;
}

class SetTier implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly percentOff: bigint,
    readonly overrides: Array<bigint | null>,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await ok(admin('PATCH', `/price-tiers/${r.tierId}`, { percent_off: percent(this.percentOff) }));
    const prices = this.overrides.flatMap((price, i) => (price === null ? [] : [{ kind: 'card', service_id: r.serviceIds[i], price: money(price) }]));
    await ok(admin('PUT', `/price-tiers/${r.tierId}/prices`, prices));
    m.percentOff = this.percentOff;
    m.overrides = [...this.overrides];
    await agrees(m, r);
  }
  toString = () => `tier ${percent(this.percentOff)}% off, own prices ${this.overrides.map((p) => (p === null ? '-' : money(p))).join(' ')}`;
}

class SetRate implements fc.AsyncCommand<Model, Real> {
  constructor(readonly rate: bigint) {}
  check = (m: Readonly<Model>) => m.rate !== null;
  async run(m: Model, r: Real) {
    await ok(admin('PUT', '/currencies/EUR', { rate: rateText(this.rate), symbol: '€' }));
    m.rate = this.rate;
    await agrees(m, r);
  }
  toString = () => `rate ${rateText(this.rate)}`;
}

/** An operator reprices a service outside the campaign. */
class Reprice implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly service: number,
    readonly pricing: Pricing,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { price, discount, percentage } = this.pricing;
    await ok(admin('PATCH', `/card-services/${r.serviceIds[this.service]}`, { price: money(price), discount: percentage ? percent(discount) : money(discount), discount_type: percentage ? 'percentage' : 'flat' }));
    m.services[this.service] = this.pricing;
    await agrees(m, r);
  }
  toString = () => `service ${this.service}: ${money(this.pricing.price)} less ${this.pricing.percentage ? `${percent(this.pricing.discount)}%` : money(this.pricing.discount)}`;
}

/** The balance and its ledger are the model's, and the catalog shows the account the model's prices. */
async function agrees(m: Model, r: Real) {
  const [row] = await app.services.sql`
    select a.balance, (select sum(amount) from balance_ledger where account_id = a.id) as ledger from accounts a where a.id = ${r.accountId}`;
  expect({ balance: row!.balance, ledger: row!.ledger }).toEqual({ balance: money(m.balance), ledger: money(m.balance) });
  const services = (await ok(r.api.get(`/api/card/services?card_id=${r.cardId}`))).services as Json[];
  const figures = (p: Pricing) => [Number(money(p.price)), p.percentage ? Number(percent(p.discount)) : Number(money(p.discount))];
  expect(services.map((s) => [s.price, s.discount])).toEqual([
    figures(shown(m, 0, m.campaign, true)), // in its campaign until the units run out (the catalog shows the campaign's)
    figures(shown(m, 1, m.services[1]!, false)),
    figures(shown(m, 2, m.services[2]!, false)),
  ]);
}

const cents = (max: number) => fc.bigInt({ min: 0n, max: BigInt(max) });
const pricing = (maxCents: number): fc.Arbitrary<Pricing> =>
  fc.oneof(
    fc.record({ price: cents(maxCents), discount: cents(10_000), percentage: fc.constant(true) }),
    // A flat discount is at most the price (the admin API refuses more).
    cents(maxCents).chain((price) => fc.record({ price: fc.constant(price), discount: cents(Number(price)), percentage: fc.constant(false) })),
  );
// Rates from 0.00000001 to 20,000 with any of 8 decimals, and the round ones a shop really sets.
const rate = fc.oneof(fc.bigInt({ min: 1n, max: 2_000_000_000_000n }), fc.constantFrom(92_000_000n, 1_550_000_000_000n, 100_000_000n, 33_333_333n));
const commands = fc.commands(
  [
    fc.uniqueArray(fc.record({ service: fc.integer({ min: 0, max: 2 }), quantity: fc.integer({ min: 1, max: 5 }) }), { minLength: 1, maxLength: 3, selector: (l) => l.service }).map((lines) => new PlaceOrder(lines)),
    fc.nat().map((which) => new Refund(which)),
    fc.tuple(cents(10_000), fc.array(fc.option(cents(999_999), { nil: null }), { minLength: 3, maxLength: 3 })).map(([off, own]) => new SetTier(off, own)),
    rate.map((r) => new SetRate(r)),
    fc.tuple(fc.integer({ min: 1, max: 2 }), pricing(999_999)).map(([service, p]) => new Reprice(service, p)),
  ],
  { maxCommands: 12 },
);

let accounts = 0;

describe('prices per account (C24), model-based', () => {
  it('what the catalog shows is what an order debits: the sum of its lines, exact to the cent; a refund gives back exactly the debit', { timeout: 180_000 }, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(commands, fc.boolean(), rate, fc.array(pricing(99_999), { minLength: 3, maxLength: 3 }), pricing(99_999), async (sequence, inEuro, startRate, services, campaign) => {
        if (inEuro) await ok(admin('PUT', '/currencies/EUR', { rate: rateText(startRate), symbol: '€' }));
        const tier = await ok(admin('POST', '/price-tiers', { name: `Property ${++accounts}` }));
        const keys = await ok(admin('POST', '/accounts', { firstname: 'Model', lastname: 'Shop', balance: money(BigInt(OPENING_BALANCE)), currency: inEuro ? 'EUR' : 'USD' }));
        await ok(admin('PATCH', `/accounts/${keys.id}`, { price_tier_id: tier.id }));
        const fixture = (p: Pricing) => ({ price: money(p.price), discount: p.percentage ? percent(p.discount) : money(p.discount), discountType: p.percentage ? ('percentage' as const) : ('flat' as const) });
        const card = await createCard(app.services.db, { services: services.map(fixture) });
        await createCampaign(app.services.db, { cardServices: [{ serviceId: card.services[0]!.id, ...fixture(campaign), maxSell: CAMPAIGN_MAX_SELL }] });
        const model: Model = {
          services,
          campaign,
          campaignLeft: CAMPAIGN_MAX_SELL,
          percentOff: 0n,
          overrides: [null, null, null],
          rate: inEuro ? startRate : null,
          balance: BigInt(OPENING_BALANCE),
          orders: [],
        };
        const real: Real = { api: client(app, await tokenFor(app, keys as { publicKey: string; secretKey: string })), accountId: keys.id, tierId: tier.id, cardId: card.id, serviceIds: card.services.map((s) => s.id) };
        await fc.asyncModelRun(() => ({ model, real }), sequence);
        sequences += 1;
      }),
      { numRuns: 30, seed: Number(process.env.ACCOUNT_PRICES_SEED ?? Date.now() % 2 ** 31) },
    );
    expect(sequences).toBe(30);
  });
});
