import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { fulfilCardOrdersIn } from '../../src/modules/fulfilment/cards.js';
import { batchedFulfilment, type FulfilmentResult } from '../../src/modules/fulfilment/index.js';
import { openCode } from '../../src/modules/inventory/codes.js';
import type { SupplierRouting } from '../../src/modules/fulfilment/index.js';
import { expectJson } from '../helpers/api.js';
import { createCard, createOrder, createTopUpOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, orderState, sellCount, stockCodes, waitFor, type Buyer } from './support.js';

let app: TestApp;
let buyer: Buyer;

beforeAll(async () => {
  // No workers: each test hands the orders to a batcher of its own, all at once.
  // One job at a time for the queues whose jobs go alone: card fulfilment still takes its jobs in batches.
  app = await startTestApp({ workers: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WORKER_CONCURRENCY: '1' } });
  buyer = await createBuyer(app, '100000.00');
  // An endpoint that wants every event: each status move writes its event to the outbox (nothing delivers it here).
  await expectJson(await buyer.api.postJson('/api/webhooks', { url: 'http://127.0.0.1:9/hook' }), 200);
});
afterAll(() => app.close());

/** A batcher as the worker builds it, telling the size of each batch and the utr of each reported status change. */
function batched(maxSize = 32, inFlight = 1) {
  const sizes: number[] = [];
  const reported: string[] = [];
  const lines = { write: (line: string) => void (JSON.parse(line).msg === 'order status changed' && reported.push(JSON.parse(line).utr)) };
  const logger = createLogger('info', lines);
  const deps = {
    db: app.services.db,
    logger,
    metrics: app.services.metrics,
    orderPages: app.services.orderPages,
    // No top-up here has routes or a TOPUP_PROVIDER: the routing hands it to an operator without calling anyone.
    suppliers: { settleHours: 24, settleBaseMs: 100 } as SupplierRouting,
  };
  const fulfil = batchedFulfilment(deps, { batch: { maxSize, inFlight, onBatch: (size) => sizes.push(size) }, topUpsAtOnce: 2 });
  return { fulfil: (orderId: number) => fulfil(logger, orderId), sizes, reported };
}

async function cardOrders(serviceId: number, cardId: number, quantities: number[]) {
  const placed = [];
  for (const quantity of quantities) placed.push(await createOrder(app.services.db, { accountId: buyer.accountId, cardId, serviceId, quantity, codesOwed: quantity }));
  return placed;
}

/** Runs `body` while any move of the order `utr`'s status raises (a bad row), which aborts its transaction. */
async function refuseStatusMoves(utr: string, body: () => Promise<void>): Promise<void> {
  await app.services.db.execute(sql.raw(`
    create function refuse_order() returns trigger language plpgsql as $$
    begin raise exception 'order % refused', new.utr; end $$;
    create trigger refuse_order before update of status on orders
      for each row when (new.utr = '${utr}') execute function refuse_order();`));
  try {
    await body();
  } finally {
    await app.services.db.execute(sql`drop trigger refuse_order on orders; drop function refuse_order()`);
  }
}

const eventsOf = async (utr: string) =>
  (await app.services.db.execute<{ type: string }>(sql`select type from webhook_events where data->>'utr' = ${utr}`)).map((r) => r.type);

/** How many deliveries each event of the order `utr` has. */
const deliveriesOf = async (utr: string) =>
  (
    await app.services.db.execute<{ endpoints: number }>(sql`
      select (select count(*)::int from webhook_deliveries d where d.event_id = e.id) as endpoints
      from webhook_events e where e.data->>'utr' = ${utr}`)
  ).map((r) => r.endpoints);

describe('batched card fulfilment', () => {
  it('two batchers at once, 80 orders for 50 codes: each code to one line, lines add up, outcomes match the rows', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 50);
    const placed = await cardOrders(serviceId, card.id, Array.from({ length: 80 }, (_, i) => 1 + (i % 2)));
    const [one, two] = [batched(16), batched(16)];

    // Both "worker processes" take half the orders each, at the same time.
    const results = await Promise.all(placed.map((order, i) => (i % 2 ? two : one).fulfil(order.id)));
    expect(one.sizes).toEqual([16, 16, 8]);
    expect(two.sizes).toEqual([16, 16, 8]);

    const states = await Promise.all(placed.map((order) => orderState(app.services.db, order.utr)));
    expect(states.reduce((sum, s) => sum + s.lines[0]!.assigned, 0)).toBe(50);
    const [codes] = await app.services.db.execute<{ taken: number }>(sql`
      select count(*)::int as taken from card_codes where card_service_id = ${serviceId} and order_line_id is not null`);
    expect(codes!.taken).toBe(50);
    states.forEach((state, i) => {
      const line = state.lines[0]!;
      expect(line.assigned + line.codes_owed).toBe(line.quantity);
      expect(state.status).toBe(line.codes_owed === 0 ? 1 : 3);
      expect(results[i]).toEqual({ kind: 'card', outcome: line.codes_owed === 0 ? 'completed' : 'stock_short' });
    });
    expect(await sellCount(app.services.db, card.id)).toBe(50);
    // One reported change and one outbox event per order, each moved once.
    expect([...one.reported, ...two.reported].sort()).toEqual(placed.map((o) => o.utr).sort());
    // A batch moves its orders in one statement: each event is still delivered to the one endpoint, once.
    for (const order of placed) expect(await deliveriesOf(order.utr)).toEqual([1]);
  });

  it('deals a service\'s codes in one statement across lines and orders, oldest order first, oldest codes first', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }, { price: '2.00' }] });
    const [a, b] = card.services.map((s) => s.id) as [number, number];
    const codesOfA = await stockCodes(app, a, 5, 'A');
    const codesOfB = await stockCodes(app, b, 1, 'B');
    const place = async (serviceIds: number[], quantities: number[]) =>
      (await expectJson(await buyer.api.postJson('/api/card/make-order', { service_ids: serviceIds, quantities }), 200)).message.utr as string;
    // Placed in this order, so their ids rise: the first takes A's two oldest codes and B's one, and so on.
    const utrs = [await place([a, b], [2, 1]), await place([a], [2]), await place([b, a], [1, 3])];
    const ids = await Promise.all(utrs.map(async (utr) => (await orderState(app.services.db, utr)).id));

    let statements = 0;
    const steps = await app.services.db.transaction(async (tx) => {
      // Every statement of the transaction goes through its driver connection.
      const spy = vi.spyOn((tx._.session as unknown as { client: { unsafe: () => unknown } }).client, 'unsafe');
      // Handed over newest first: the deal goes by age, not by the order given.
      const done = await fulfilCardOrdersIn(tx, [...ids].reverse());
      statements = spy.mock.calls.length;
      return done;
    });
    expect(steps.map((step) => step.outcome)).toEqual(['stock_short', 'completed', 'completed']);
    // Whatever the number of orders: the assignment under shared locks (a savepoint, the locks, the assignment); B ran
    // out under it, so back to the savepoint and the same again with B locked exclusive; then a move to each status
    // reached and the stock check.
    expect(statements).toBe(10);

    const dealt = await app.services.sql<{ utr: string; service: number; sealed: Buffer }[]>`
      select o.utr, l.card_service_id as service, c.code_encrypted as sealed
      from card_codes c join order_lines l on l.id = c.order_line_id join orders o on o.id = l.order_id
      where o.id = any(${ids}::bigint[]) order by c.id`;
    const key = app.services.config.codeEncryptionKey;
    const codesTo = (utr: string, service: number) =>
      dealt.filter((row) => row.utr === utr && row.service === service).map((row) => openCode(key, row.sealed));
    expect(codesTo(utrs[0]!, a)).toEqual(codesOfA.slice(0, 2));
    expect(codesTo(utrs[0]!, b)).toEqual(codesOfB);
    expect(codesTo(utrs[1]!, a)).toEqual(codesOfA.slice(2, 4));
    expect(codesTo(utrs[2]!, a)).toEqual(codesOfA.slice(4));
    expect(codesTo(utrs[2]!, b)).toEqual([]);
    const last = await orderState(app.services.db, utrs[2]!);
    expect(last.status).toBe(3);
    expect(last.lines.map((line) => [line.card_service_id, line.codes_owed, line.assigned])).toEqual([
      [b, 1, 0],
      [a, 2, 1],
    ]);
    expect(await sellCount(app.services.db, card.id)).toBe(6);
  });

  it('with codes to spare, deals in one pass under shared locks: batches of a service go side by side', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 10, 'P');
    const place = async () => (await expectJson(await buyer.api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }), 200)).message.utr as string;
    const ids = await Promise.all([await place(), await place()].map(async (utr) => (await orderState(app.services.db, utr)).id));
    // Another transaction holds the service's lock shared, as a batch dealing beside this one does.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => (holding = resolve));
    const beside = app.services.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock_shared(7301004, ${serviceId})`);
      holding();
      await held;
    });
    await holds;
    try {
      let statements: string[] = [];
      const steps = await app.services.db.transaction(async (tx) => {
        const spy = vi.spyOn((tx._.session as unknown as { client: { unsafe: () => unknown } }).client, 'unsafe');
        const done = await fulfilCardOrdersIn(tx, ids);
        statements = spy.mock.calls.map((call) => String((call as unknown[])[0]).trim().split(/\s+/).slice(0, 2).join(' '));
        return done;
      });
      expect(steps.map((step) => step.outcome)).toEqual(['completed', 'completed']);
      // Not waited for the batch beside it; no second pass: the savepoint, the locks, the assignment, one move, the
      // stock check.
      expect(statements).toHaveLength(5);
      expect(statements[0]).toBe('savepoint assignment');
    } finally {
      release();
      await beside;
    }
  });

  it('one order that fails in a batch fails alone: the others complete, each reported once after its commit', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 10);
    const placed = await cardOrders(serviceId, card.id, [1, 1, 1, 1, 1, 1]);
    const bad = placed[3]!;
    // A bad row: this order's status move raises, which aborts whatever transaction it is in.
    await refuseStatusMoves(bad.utr, async () => {
      const { fulfil, sizes, reported } = batched();
      const results = await Promise.allSettled(placed.map((order) => fulfil(order.id)));

      // One batch transaction, rolled back; then each order alone.
      expect(sizes).toEqual([6]);
      results.forEach((result, i) => {
        if (i === 3) expect(result).toMatchObject({ status: 'rejected', reason: { message: `order ${bad.utr} refused` } });
        else expect(result).toEqual({ status: 'fulfilled', value: { kind: 'card', outcome: 'completed' } });
      });
      const badState = await orderState(app.services.db, bad.utr);
      expect(badState.status).toBe(0);
      expect(badState.lines[0]).toMatchObject({ codes_owed: 1, assigned: 0 });
      // The good orders' moves of the rolled-back batch were never reported nor written: once each, from their own commit.
      const good = placed.filter((order) => order !== bad).map((order) => order.utr);
      expect(reported.sort()).toEqual(good.sort());
      for (const utr of good) expect(await eventsOf(utr)).toEqual(['order.completed']);
      expect(await eventsOf(bad.utr)).toEqual([]);
      expect(await sellCount(app.services.db, card.id)).toBe(5);
    });
  });

  it('a lone order goes at once; orders that arrive meanwhile go together in the next batch, up to the cap', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 20);
    const placed = await cardOrders(serviceId, card.id, Array.from({ length: 12 }, () => 1));
    const { fulfil, sizes } = batched(8);

    const first = fulfil(placed[0]!.id);
    await new Promise((resolve) => setImmediate(resolve));
    // The first batch (of one) has started: the next eleven wait for it, then go as 8 and 3.
    expect(sizes).toEqual([1]);
    const rest = placed.slice(1).map((order) => fulfil(order.id));
    expect(await Promise.all([first, ...rest])).toEqual(placed.map(() => ({ kind: 'card', outcome: 'completed' })));
    expect(sizes).toEqual([1, 8, 3]);
  });

  it('runs an order twice, a refunded order and a missing one as before; a top-up leaves the batch for its own path', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 3);
    const [done, refunded] = await cardOrders(serviceId, card.id, [2, 1]);
    await app.services.db.execute(sql`update orders set status = 2 where id = ${refunded!.id}`);
    const topUp = await createTopUpOrder(app.services.db, { accountId: buyer.accountId });
    const { fulfil, sizes } = batched();

    const results = await Promise.all([done!.id, done!.id, refunded!.id, 2 ** 31 - 1, topUp.id].map((id) => fulfil(id)));
    expect(sizes).toEqual([5]);
    expect(results).toEqual<FulfilmentResult[]>([
      { kind: 'card', outcome: 'completed' },
      { kind: 'card', outcome: 'noop' },
      { kind: 'card', outcome: 'noop' },
      { kind: 'missing' },
      { kind: 'top_up', outcome: 'awaiting_operator' },
    ]);
    expect((await orderState(app.services.db, done!.utr)).lines[0]).toMatchObject({ codes_owed: 0, assigned: 2 });
    expect((await orderState(app.services.db, refunded!.utr)).lines[0]).toMatchObject({ codes_owed: 1, assigned: 0 });
    expect(await eventsOf(done!.utr)).toEqual(['order.completed']);
    expect(await sellCount(app.services.db, card.id)).toBe(2);
  });

  it('never deals a line more codes than it owes when its order is fulfilled by two transactions at once', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 1);
    const [order] = await cardOrders(serviceId, card.id, [3]);
    // The first transaction delivers the one code there is and keeps the order locked.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let delivered!: () => void;
    const hasDelivered = new Promise<void>((resolve) => (delivered = resolve));
    const first = app.services.db.transaction(async (tx) => {
      const steps = await fulfilCardOrdersIn(tx, [order!.id]);
      delivered();
      await held;
      return steps;
    });
    await hasDelivered;
    // Codes arrive, and a second fulfilment of the same order (a restock, a job run again) waits for the first.
    await stockCodes(app, serviceId, 5);
    const second = app.services.db.transaction((tx) => fulfilCardOrdersIn(tx, [order!.id]));
    await waitFor('the second fulfilment to wait for the order', async () =>
      (await app.services.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).length > 0);
    release();
    expect((await first).map((step) => step.outcome)).toEqual(['stock_short']);
    expect((await second).map((step) => step.outcome)).toEqual(['completed']);
    const state = await orderState(app.services.db, order!.utr);
    expect(state.status).toBe(1);
    expect(state.lines[0]).toMatchObject({ quantity: 3, codes_owed: 0, assigned: 3 });
    expect(await sellCount(app.services.db, card.id)).toBe(3);
  });

  it('through the queue: the job of a bad order fails, the jobs beside it complete with their own results', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 3);
    const placed = await cardOrders(serviceId, card.id, [1, 2, 1, 1]);
    const bad = placed[2]!;
    await refuseStatusMoves(bad.utr, async () => {
      // The jobs wait in the queue before the worker starts, so they arrive together.
      for (const order of placed) await app.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr });
      await app.startWorkers();
      const jobs = await waitFor('every job to have run', async () => {
        const all = await Promise.all(placed.map((order) => app.services.queues.fulfilment.getJob(order.utr)));
        return all.every((job) => job && (job.finishedOn || job.attemptsMade > 0)) && all;
      });
      expect(jobs.map((job) => job!.returnvalue ?? null)).toEqual([
        { kind: 'card', outcome: 'completed' },
        { kind: 'card', outcome: 'completed' },
        null,
        { kind: 'card', outcome: 'stock_short' },
      ]);
      expect(jobs[2]!.failedReason).toBe(`order ${bad.utr} refused`);
      expect((await orderState(app.services.db, bad.utr)).status).toBe(0);
    });
  });

  it('through the queue, whatever WORKER_CONCURRENCY: queued card orders go in transactions of several orders, at most 32', async () => {
    await app.startWorkers();
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 150);
    const placed = await cardOrders(serviceId, card.id, Array.from({ length: 150 }, () => 1));
    await app.services.queues.fulfilment.addBulk(placed.map((order) => ({ name: 'fulfil', data: { orderId: order.id, utr: order.utr }, opts: { jobId: order.utr } })));
    await waitFor('every order to complete', async () => {
      const [row] = await app.services.sql`select count(*)::int as done from orders where id = any(${placed.map((o) => o.id)}::bigint[]) and status = 1`;
      return row!.done === placed.length;
    });
    // Orders completed by one transaction share its start time (now()).
    const transactions = await app.services.sql<{ orders: number }[]>`
      select count(*)::int as orders from orders where id = any(${placed.map((o) => o.id)}::bigint[]) group by completed_at`;
    const sizes = transactions.map((t) => t.orders);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(32);
    expect(sizes.reduce((sum, n) => sum + n, 0)).toBe(placed.length);
  });
});
