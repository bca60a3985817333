import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fulfilCardOrder, restockCardService } from '../../src/modules/fulfilment/cards.js';
import { openCode } from '../../src/modules/inventory/codes.js';
import { expectJson } from '../helpers/api.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  createBuyer,
  expectLedgerConsistent,
  orderState,
  placeCardOrder,
  placeTopUpOrder,
  sellCount,
  stockCodes,
  waitFor,
  waitForStatus,
  type Buyer,
} from './support.js';

let app: TestApp;
let buyer: Buyer;

beforeAll(async () => {
  app = await startTestApp({ workers: true });
  buyer = await createBuyer(app);
});
afterAll(() => app.close());

describe('card fulfilment worker', () => {
  it('completes an order when every line gets its codes (0 → 1) and the buyer sees them', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }, { price: '4.00' }] });
    const [first, second] = card.services;
    const firstCodes = await stockCodes(app, first!.id, 3);
    const secondCodes = await stockCodes(app, second!.id, 1);

    const utr = await placeCardOrder(buyer, [
      [first!.id, 2],
      [second!.id, 1],
    ]);
    const state = await waitForStatus(app, utr, 1);
    expect(state.lines.map((l) => [l.quantity, l.codes_owed, l.assigned])).toEqual([
      [2, 0, 2],
      [1, 0, 1],
    ]);
    expect(await sellCount(app.services.db, card.id)).toBe(3);

    // Codes are handed out oldest first and the order list shows exactly those.
    const delivered = await app.services.db.execute<{ code_encrypted: Buffer; order_line_id: number }>(
      sql`select code_encrypted, order_line_id from card_codes where order_line_id is not null order by id`,
    );
    const plain = delivered.map((row) => openCode(app.services.config.codeEncryptionKey, row.code_encrypted));
    expect(plain.sort()).toEqual([firstCodes[0], firstCodes[1], secondCodes[0]].sort());
    const list = await expectJson(await buyer.api.get('/api/get-card/orders'), 200);
    const entry = list.message.data.find((o: { utr: string }) => o.utr === utr);
    expect(entry.order_details.flatMap((d: { card_codes: string[] }) => d.card_codes).sort()).toEqual(plain.sort());
    const [completed] = await app.services.db.execute<{ completed_at: string | null }>(
      sql`select completed_at from orders where utr = ${utr}`,
    );
    expect(completed!.completed_at).not.toBeNull();
  });

  it('leaves an order stock_short with the owed count when codes run out (0 → 3)', async () => {
    const card = await createCard(app.services.db, { services: [{}, {}] });
    const [full, short] = card.services;
    await stockCodes(app, full!.id, 2);
    await stockCodes(app, short!.id, 1);

    const utr = await placeCardOrder(buyer, [
      [full!.id, 2],
      [short!.id, 4],
    ]);
    const state = await waitForStatus(app, utr, 3);
    expect(state.lines.map((l) => [l.quantity, l.codes_owed, l.assigned])).toEqual([
      [2, 0, 2],
      [4, 3, 1],
    ]);
    expect(await sellCount(app.services.db, card.id)).toBe(3);
  });

  it('a restock job fulfils waiting stock_short orders (3 → 1)', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    const utr = await placeCardOrder(buyer, [[service.id, 3]]);
    await waitForStatus(app, utr, 3);

    await stockCodes(app, service.id, 3);
    await app.services.queues.restock.add('restock', { cardServiceId: service.id });
    const state = await waitForStatus(app, utr, 1);
    expect(state.lines[0]).toMatchObject({ quantity: 3, codes_owed: 0, assigned: 3 });
    expect(await sellCount(app.services.db, card.id)).toBe(3);
  });

  it('deals a free code an assignment beside it skipped and then gave back, once the codes after it run short', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    await stockCodes(app, service.id, 4);
    const ids = (await app.services.sql<{ id: string }[]>`select id from card_codes where card_service_id = ${service.id} order by id`).map((row) => row.id);
    const takenBy = async (utr: string) =>
      (await app.services.sql<{ id: string }[]>`
        select c.id from card_codes c join order_lines l on l.id = c.order_line_id join orders o on o.id = l.order_id
        where o.utr = ${utr} order by c.id`).map((row) => row.id);
    // A transaction beside the next order holds the second code, as an assignment dealing it would, then rolls back.
    const beside = await app.services.sql.reserve();
    try {
      await beside`begin`;
      await beside`select id from card_codes where id = ${ids[1]!} for no key update`;
      const first = await placeCardOrder(buyer, [[service.id, 1]]);
      await waitForStatus(app, first, 1);
      const second = await placeCardOrder(buyer, [[service.id, 2]]);
      await waitForStatus(app, second, 1);
      expect([...(await takenBy(first)), ...(await takenBy(second))]).toEqual([ids[0], ids[2], ids[3]]);
      await beside`rollback`;
    } finally {
      beside.release();
    }
    // The second code is now free behind the newest one taken: the next order gets it, and the one after waits.
    const third = await placeCardOrder(buyer, [[service.id, 1]]);
    await waitForStatus(app, third, 1);
    expect(await takenBy(third)).toEqual([ids[1]]);
    const fourth = await placeCardOrder(buyer, [[service.id, 1]]);
    await waitForStatus(app, fourth, 3);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('running a job twice changes nothing the second time', async () => {
    const card = await createCard(app.services.db);
    const service = card.services[0]!;
    await stockCodes(app, service.id, 1);
    const done = await placeCardOrder(buyer, [[service.id, 1]]);
    const doneState = await waitForStatus(app, done, 1);
    const short = await placeCardOrder(buyer, [[service.id, 2]]);
    const shortState = await waitForStatus(app, short, 3);

    // Again through the queue (another job id for the same order), and directly.
    const again = await app.services.queues.fulfilment.add('fulfil', { orderId: doneState.id, utr: done }, { jobId: `${done}-again` });
    await waitFor('the repeated job', async () => {
      const state = await app.services.queues.fulfilment.getJobState(again.id!);
      return state === 'completed';
    });
    expect((await app.services.queues.fulfilment.getJob(again.id!))!.returnvalue).toEqual({ kind: 'card', outcome: 'noop' });
    expect(await fulfilCardOrder(app.services.db, doneState.id)).toBe('noop');
    expect(await fulfilCardOrder(app.services.db, shortState.id)).toBe('stock_short');
    expect(await restockCardService(app.services.db, service.id)).toEqual({ fulfilledOrders: 0 });

    expect(await orderState(app.services.db, done)).toEqual(doneState);
    expect(await orderState(app.services.db, short)).toEqual(shortState);
    expect(await sellCount(app.services.db, card.id)).toBe(1);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('hands top-up orders to the provider: the manual one leaves them initiate for an operator', async () => {
    const utr = await placeTopUpOrder(buyer, await createTopUp(app.services.db));
    await waitFor('the top-up job', async () => (await app.services.queues.fulfilment.getJobState(utr)) === 'completed');
    expect((await app.services.queues.fulfilment.getJob(utr))!.returnvalue).toEqual({ kind: 'top_up', outcome: 'awaiting_operator' });
    expect((await orderState(app.services.db, utr)).status).toBe(0);
  });

  it('an invalid payload fails at once instead of being retried', async () => {
    const job = await app.services.queues.fulfilment.add('fulfil', { orderId: -1, utr: '' }, { jobId: 'invalid-payload' });
    await waitFor('the job to fail', async () => (await app.services.queues.fulfilment.getJobState(job.id!)) === 'failed');
    const failed = await app.services.queues.fulfilment.getJob(job.id!);
    expect(failed!.attemptsMade).toBe(1);
    expect(failed!.failedReason).toContain('invalid order-fulfilment job');
  });
});
