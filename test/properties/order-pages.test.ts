/**
 * The order lists' page cache, model-based: fast-check command sequences against the real service (an API on its own
 * database, ORDER_PAGES_CACHE_MS a minute so that only a stamp explains a fresh page; no worker runs, so the database
 * moves only with the commands). Orders are placed through HTTP, fulfilled and restocked by the workers' own functions
 * and observer, refunded by an operator and reviewed through HTTP, their card renamed through the admin API, and pages
 * of every size and number read in between. After every command, the first page and the last one read must be what
 * the database says now, entry for entry, codes included: the cache never answers with a page a change has outdated.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, buyer, expectJson } from '../helpers/api.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { cardCodes } from '../../src/db/schema.js';
import { openCode, sealCode } from '../../src/modules/inventory/codes.js';
import { fulfilCardOrder, restockCardService } from '../../src/modules/fulfilment/cards.js';
import { statusObserver } from '../../src/modules/order-state/events.js';
import { fromDatabase, listOrders } from '../../src/modules/orders/listing.js';

const ASSETS = 'https://assets.example';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_PAGES_CACHE_MS: '60000', ASSET_BASE_URL: ASSETS } });
});
afterAll(async () => app?.close());

/** The model is the database itself: what a page must show is what it says now. Kept: the pages read so far. */
type Model = { reads: Array<{ page: number; perPage: number }> };
type Real = { api: Awaited<ReturnType<typeof buyer>>['api']; accountId: number; cardId: number; serviceIds: number[] };

const observer = () => statusObserver({ logger: app.services.logger, metrics: app.services.metrics, orderPages: app.services.orderPages });

/** The page through HTTP (the cache) and straight from the database, with the same caller and asset base. */
async function samePage(r: Real, page: number, perPage: number): Promise<void> {
  const body = await expectJson(await r.api.get(`/api/get-card/orders?page=${page}&per_page=${perPage}`), 200);
  const key = app.services.config.codeEncryptionKey;
  const reader = { caller: { id: r.accountId, livemode: true }, assetBase: ASSETS, openCode: (sealed: Buffer) => openCode(key, sealed) };
  const fresh = await listOrders(fromDatabase(app.services.db), reader, 'card', { page, perPage });
  expect({ total: body.message.total, data: body.message.data }).toEqual({ total: fresh.total, data: JSON.parse(fresh.entries) });
}

async function agrees(m: Model, r: Real): Promise<void> {
  await samePage(r, 1, 10);
  for (const { page, perPage } of m.reads.slice(-2)) await samePage(r, page, perPage);
}

const orderIds = async (r: Real, statuses: number[]): Promise<number[]> =>
  (await app.services.sql<Array<{ id: number }>>`
    select id::float8 as id from orders where account_id = ${r.accountId} and status = any(${statuses}::smallint[]) order by id`).map((row) => row.id);

class Place implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly service: number,
    readonly quantity: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await expectJson(await r.api.postJson('/api/card/make-order', { service_ids: [r.serviceIds[this.service]], quantities: [this.quantity] }), 200);
    await agrees(m, r);
  }
  toString = () => `place ${this.quantity} of service ${this.service}`;
}

/** The fulfilment worker's function on one waiting order: its codes from stock, completed or stock_short. */
class Fulfil implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const waiting = await orderIds(r, [0]);
    if (waiting.length > 0) await fulfilCardOrder(app.services.db, waiting[this.which % waiting.length]!, observer());
    await agrees(m, r);
  }
  toString = () => `fulfil waiting order ${this.which}`;
}

/** Codes imported, and the restock worker's function: they go to the stock_short orders oldest first, maybe not all. */
class Restock implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly service: number,
    readonly codes: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const serviceId = r.serviceIds[this.service]!;
    const key = app.services.config.codeEncryptionKey;
    for (let i = 0; i < this.codes; i += 1) await app.services.db.insert(cardCodes).values({ cardServiceId: serviceId, ...sealCode(key, `C-${serviceId}-${Math.random()}`) });
    await restockCardService(app.services.db, serviceId, observer());
    await agrees(m, r);
  }
  toString = () => `restock ${this.codes} codes of service ${this.service}`;
}

class Refund implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const open = await orderIds(r, [0, 3]);
    if (open.length > 0) {
      const [order] = await app.services.sql`select utr from orders where id = ${open[this.which % open.length]!}`;
      await expectJson(await adminOf(app)('POST', `/orders/${order!.utr}/refund`, { reason: 'Operator refund.' }), 200);
    }
    await agrees(m, r);
  }
  toString = () => `operator refunds open order ${this.which}`;
}

/** A review of the card (refused with 409 until the caller has a completed order of it: nothing changes then). */
class Review implements fc.AsyncCommand<Model, Real> {
  constructor(readonly rating: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const response = await r.api.postJson('/api/card/review', { card_id: r.cardId, rating: this.rating, comment: `Rated ${this.rating}.` });
    expect([200, 409]).toContain(response.status);
    await agrees(m, r);
  }
  toString = () => `review ${this.rating}`;
}

class Rename implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await expectJson(await adminOf(app)('PATCH', `/cards/${r.cardId}`, { name: this.name }), 200);
    await agrees(m, r);
  }
  toString = () => `card renamed ${this.name}`;
}

class Read implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly page: number,
    readonly perPage: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.reads.push({ page: this.page, perPage: this.perPage });
    await agrees(m, r);
  }
  toString = () => `read page ${this.page} of ${this.perPage}`;
}

const commands = fc.commands(
  [
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 3 })).map(([service, quantity]) => new Place(service, quantity)),
    fc.nat().map((which) => new Fulfil(which)),
    // Fewer codes than an order of 2 or 3 waits for, as often as not: an order given codes that stays stock_short.
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 2 })).map(([service, codes]) => new Restock(service, codes)),
    fc.nat().map((which) => new Refund(which)),
    fc.integer({ min: 1, max: 5 }).map((rating) => new Review(rating)),
    fc.constantFrom('Gift', 'Gift card', 'Store card').map((name) => new Rename(name)),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom(1, 2, 10)).map(([page, perPage]) => new Read(page, perPage)),
  ],
  { maxCommands: 14 },
);

describe('the order list page cache, model-based', () => {
  it('every page read through the API is the page the database holds now, whatever changed it', { timeout: 180_000 }, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        const { keys, api } = await buyer(app, '500.00');
        const card = await createCard(app.services.db, { name: 'Gift', services: [{ price: '2.00' }, { price: '3.00' }] });
        const real: Real = { api, accountId: keys.id, cardId: card.id, serviceIds: card.services.map((s) => s.id) };
        await fc.asyncModelRun(() => ({ model: { reads: [] }, real }), sequence);
        sequences += 1;
      }),
      { numRuns: 50, seed: Number(process.env.ORDER_PAGES_SEED ?? Date.now() % 2 ** 31) },
    );
    expect(sequences).toBe(50);
  });
});
