/**
 * C25's money rule, model-based: fast-check command sequences against the real service and its workers (orders through
 * HTTP, fulfilled by the real fulfilment and routing jobs). The model keeps two balances and the live stock; after
 * every command the service must agree with it to the cent: a test order moves the test balance only (a refused test
 * top-up gives back exactly what it took), a live order the live balance and the stock only, an operator's deposit or
 * test-balance change its own balance only, and each balance equals the sum of its own ledger.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromCents } from '../../src/lib/money.js';
import { adminOf, client, successMessage, tokenFor } from '../helpers/api.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { waitFor } from '../helpers/system.js';

let app: TestApp;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);
const ok = successMessage;

beforeAll(async () => {
  app = await startTestApp({ workers: true });
});
afterAll(async () => app?.close());

const CARD_CENTS = 250n;
const TOP_UP_CENTS = 499n;
const STOCK = 40;

type Model = { live: bigint; test: bigint; stock: number };
type Api = ReturnType<typeof client>;
type Real = { accountId: number; live: Api; test: Api; serviceId: number; topUpId: number; topUpServiceId: number };

const money = (cents: bigint) => fromCents(Number(cents));
const statusOf = async (utr: string) => (await app.services.sql<{ status: number }[]>`select status from orders where utr = ${utr}`)[0]!.status;
/** Waits for an order's workers to settle it (completed or refunded). */
const settled = (utr: string) => waitFor(`order ${utr} settled`, async () => [1, 2].includes(await statusOf(utr)));

class CardOrder implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly livemode: boolean,
    readonly quantity: number,
  ) {}
  check = (m: Readonly<Model>) => (this.livemode ? m.live : m.test) >= CARD_CENTS * BigInt(this.quantity) && (!this.livemode || m.stock >= this.quantity);
  async run(m: Model, r: Real) {
    const api = this.livemode ? r.live : r.test;
    const placed = await ok(api.postJson('/api/card/make-order', { service_ids: [r.serviceId], quantities: [this.quantity] }));
    await settled(placed.utr);
    const cost = CARD_CENTS * BigInt(this.quantity);
    if (this.livemode) {
      m.live -= cost;
      m.stock -= this.quantity;
    } else {
      m.test -= cost;
    }
    await agrees(m, r);
  }
  toString = () => `${this.livemode ? 'live' : 'test'} card order × ${this.quantity}`;
}

/** A test top-up: a player id ending 0000 is refused and refunded, any other completes. */
class TestTopUp implements fc.AsyncCommand<Model, Real> {
  constructor(readonly refused: boolean) {}
  check = (m: Readonly<Model>) => m.test >= TOP_UP_CENTS;
  async run(m: Model, r: Real) {
    const playerId = this.refused ? '5120000' : '5123456';
    const message = (await ok(r.test.postJson('/api/top-up/make-order', { topUpId: r.topUpId, serviceId: r.topUpServiceId, player_id: playerId }))) as unknown as string;
    const utr = /order number is (\S+)\./.exec(message)![1]!;
    await settled(utr);
    expect(await statusOf(utr)).toBe(this.refused ? 2 : 1);
    if (!this.refused) m.test -= TOP_UP_CENTS;
    await agrees(m, r);
  }
  toString = () => `test top-up ${this.refused ? 'refused' : 'completed'}`;
}

class Deposit implements fc.AsyncCommand<Model, Real> {
  constructor(readonly cents: bigint) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await ok(admin('POST', `/accounts/${r.accountId}/balance`, { amount: money(this.cents), reason: 'property' }));
    m.live += this.cents;
    await agrees(m, r);
  }
  toString = () => `deposit ${money(this.cents)}`;
}

class SetTestBalance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly cents: bigint) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await ok(admin('POST', `/accounts/${r.accountId}/test-balance`, { amount: money(this.cents) }));
    m.test = this.cents;
    await agrees(m, r);
  }
  toString = () => `test balance ${money(this.cents)}`;
}

/** Both balances, their ledgers and the live stock are the model's. */
async function agrees(m: Model, r: Real) {
  const [row] = await app.services.sql`
    select a.balance, a.test_balance,
      (select coalesce(sum(amount), 0)::numeric(14, 2) from balance_ledger where account_id = a.id and livemode) as live_ledger,
      (select coalesce(sum(amount), 0)::numeric(14, 2) from balance_ledger where account_id = a.id and not livemode) as test_ledger,
      (select count(*)::int from card_codes where card_service_id = ${r.serviceId} and order_line_id is null) as stock
    from accounts a where a.id = ${r.accountId}`;
  expect(row).toEqual({ balance: money(m.live), test_balance: money(m.test), live_ledger: money(m.live), test_ledger: money(m.test), stock: m.stock });
}

const commands = fc.commands(
  [
    fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 4 })).map(([live, quantity]) => new CardOrder(live, quantity)),
    fc.boolean().map((refused) => new TestTopUp(refused)),
    fc.bigInt({ min: 1n, max: 5_000n }).map((cents) => new Deposit(cents)),
    fc.bigInt({ min: 0n, max: 5_000n }).map((cents) => new SetTestBalance(cents)),
  ],
  { maxCommands: 10 },
);

describe('test mode (C25), model-based', () => {
  it('a test order moves only the test balance, a live one only the live balance and stock; each balance is its ledger', { timeout: 240_000 }, async () => {
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(commands, fc.bigInt({ min: 0n, max: 3_000n }), async (sequence, liveOpening) => {
        const keys = await ok(admin('POST', '/accounts', { firstname: 'Model', lastname: 'Shop', balance: money(liveOpening) }));
        const testKey = await ok(admin('POST', `/accounts/${keys.id}/keys`, { mode: 'test' }));
        const card = await createCard(app.services.db, { services: [{ price: money(CARD_CENTS) }] });
        const serviceId = card.services[0]!.id;
        await app.services.sql`insert into card_codes (card_service_id, code_encrypted, code_digest)
          select ${serviceId}, decode(md5(${serviceId} || '-' || g), 'hex'), decode(md5('d' || ${serviceId} || '-' || g), 'hex') from generate_series(1, ${STOCK}) g`;
        const topUp = await createTopUp(app.services.db, {
          orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
          services: [{ price: money(TOP_UP_CENTS) }],
        });
        const real: Real = {
          accountId: keys.id,
          live: client(app, await tokenFor(app, keys as { publicKey: string; secretKey: string })),
          test: client(app, await tokenFor(app, { publicKey: testKey.public_key, secretKey: testKey.secret_key })),
          serviceId,
          topUpId: topUp.id,
          topUpServiceId: topUp.services[0]!.id,
        };
        const model: Model = { live: liveOpening, test: 100_000n, stock: STOCK };
        await agrees(model, real);
        await fc.asyncModelRun(() => ({ model, real }), sequence);
        sequences += 1;
      }),
      { numRuns: 15, seed: Number(process.env.TEST_MODE_SEED ?? Date.now() % 2 ** 31) },
    );
    expect(sequences).toBe(15);
  });
});
