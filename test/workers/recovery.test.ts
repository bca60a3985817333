import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fulfilCardOrder } from '../../src/modules/fulfilment/cards.js';
import { newUtr, placeOrder } from '../../src/modules/orders/service.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, orderState, placeCardOrder, sellCount, stockCodes, waitFor, waitForStatus, type Buyer } from './support.js';

/** Workers are started per test here, with a fast reconciler. */
let app: TestApp;
let buyer: Buyer;
let workers: RunningWorkers | null = null;
const start = async () => {
  workers = await startWorkers(app.services, { reconciler: { intervalMs: 200, staleAfterMs: 300 } });
};

beforeAll(async () => {
  app = await startTestApp();
  buyer = await createBuyer(app);
});
afterEach(async () => {
  await workers?.close();
  workers = null;
});
afterAll(() => app.close());

describe('recovery', () => {
  it('the reconciler re-enqueues an order whose job was lost with the Redis data', async () => {
    const card = await createCard(app.services.db);
    await stockCodes(app, card.services[0]!.id, 1);
    const utr = await placeCardOrder(buyer, [[card.services[0]!.id, 1]]);
    const queue = app.services.queues.fulfilment;
    expect(await queue.getJobState(utr)).toBe('waiting');

    await queue.obliterate({ force: true });
    expect(await queue.getJobState(utr)).toBe('unknown');
    await start();
    await waitForStatus(app, utr, 1);
    expect(await sellCount(app.services.db, card.id)).toBe(1);
  });

  it('the reconciler restocks a service whose stock_short orders can be served', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    const utr = await placeCardOrder(buyer, [[service.id, 2]]);
    expect(await fulfilCardOrder(app.services.db, (await orderState(app.services.db, utr)).id)).toBe('stock_short');

    // Codes arrive without a restock job being enqueued (as when Redis was unreachable).
    await stockCodes(app, service.id, 2);
    await start();
    const state = await waitForStatus(app, utr, 1);
    expect(state.lines[0]).toMatchObject({ codes_owed: 0, assigned: 2 });
  });

  it('a fulfilment aborted mid-way leaves nothing half-done and its retry completes the order once', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    await stockCodes(app, service.id, 4);
    const utr = await placeCardOrder(buyer, [[service.id, 2]]);

    // Hold the outbox table so the worker stops after assigning codes, at the status move before its commit.
    const blocker = await app.services.sql.reserve();
    try {
      await blocker`begin`;
      await blocker`lock table webhook_events in exclusive mode`;
      await start();
      const victim = await waitFor('the worker to block', async () => {
        const [row] = await app.services.db.execute<{ pid: number }>(sql`
          select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%update orders set%'`);
        return row;
      });
      // Cancelling the blocked statement aborts the worker's transaction mid-way, as a crash would.
      await app.services.db.execute(sql`select pg_cancel_backend(${victim.pid})`);
      await waitFor('the attempt to fail', async () => ((await app.services.queues.fulfilment.getJob(utr))?.attemptsMade ?? 0) >= 1);

      const killed = await orderState(app.services.db, utr);
      expect(killed.status).toBe(0);
      expect(killed.lines[0]).toMatchObject({ codes_owed: 2, assigned: 0 });
      expect(await sellCount(app.services.db, card.id)).toBe(0);
    } finally {
      await blocker`rollback`;
      blocker.release();
    }

    const state = await waitForStatus(app, utr, 1);
    expect(state.lines[0]).toMatchObject({ codes_owed: 0, assigned: 2 });
    expect(await sellCount(app.services.db, card.id)).toBe(2);
    const [free] = await app.services.db.execute<{ n: number }>(
      sql`select count(*)::int as n from card_codes where card_service_id = ${service.id} and order_line_id is null`,
    );
    expect(free!.n).toBe(2);
  });

  it('codes skipped while another transaction held them, which then aborted, still reach the order', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    await stockCodes(app, service.id, 2);
    // A fulfilment that took the codes and then died before its commit (a terminated backend).
    const holder = await app.services.sql.reserve();
    try {
      await holder`begin`;
      await holder`select id from card_codes where card_service_id = ${service.id} for no key update`;
      await start();
      const utr = await placeCardOrder(buyer, [[service.id, 2]]);
      await waitForStatus(app, utr, 3);
      await holder`rollback`;
      const state = await waitForStatus(app, utr, 1);
      expect(state.lines[0]).toMatchObject({ codes_owed: 0, assigned: 2 });
    } finally {
      holder.release();
    }
  });

  it('an order whose job ran before the order could be read, and so did nothing, is fulfilled all the same', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    await stockCodes(app, service.id, 1);
    await start();
    const queue = app.services.queues.fulfilment;
    const utr = newUtr('card');
    // The job is taken while the order is not committed yet: it finds no order and completes.
    await app.services.db.transaction(async (tx) => {
      const placed = await placeOrder(tx, { accountId: buyer.accountId, kind: 'card', utr, topUpId: null, informations: null, fields: null, lines: [{ serviceId: service.id, quantity: 1 }], idempotency: null });
      if (placed.kind !== 'placed') throw new Error('not placed');
      await queue.add('fulfil', { orderId: placed.orderId, utr }, { jobId: utr });
      await waitFor('the job to complete', async () => (await queue.getJobState(utr)) === 'completed');
    });
    expect((await queue.getJob(utr))?.returnvalue).toEqual({ kind: 'missing' });

    const state = await waitForStatus(app, utr, 1);
    expect(state.lines[0]).toMatchObject({ codes_owed: 0, assigned: 1 });
  });

  it('close() stops the workers: nothing is processed afterwards', async () => {
    const card = await createCard(app.services.db);
    await stockCodes(app, card.services[0]!.id, 1);
    await start();
    await workers!.close();
    workers = null;
    const utr = await placeCardOrder(buyer, [[card.services[0]!.id, 1]]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await orderState(app.services.db, utr)).status).toBe(0);
    expect(await app.services.queues.fulfilment.getJobState(utr)).toBe('waiting');
  });
});
