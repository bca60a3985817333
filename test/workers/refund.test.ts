import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { fulfilCardOrder } from '../../src/modules/fulfilment/cards.js';
import { completeTopUpOrder, refundOrder } from '../../src/modules/fulfilment/index.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, expectLedgerConsistent, orderState, placeCardOrder, placeTopUpOrder, stockCodes, waitFor, type Buyer } from './support.js';

/** Orders are moved by calling the domain functions directly; no worker runs unless a test starts them. */
let app: TestApp;
let buyer: Buyer;

beforeAll(async () => {
  app = await startTestApp();
  buyer = await createBuyer(app, '500.00');
});
afterAll(() => app.close());

const balanceOf = async (accountId: number) => {
  const [row] = await app.services.db.execute<{ balance: string }>(sql`select balance from accounts where id = ${accountId}`);
  return row!.balance;
};
const offeredSell = async (serviceId: number) => {
  const [row] = await app.services.db.execute<{ offered_sell: number }>(sql`select offered_sell from card_services where id = ${serviceId}`);
  return row!.offered_sell;
};
const refundRows = async (orderId: number) =>
  app.services.db.execute<{ amount: string; reason: string }>(
    sql`select amount, reason from balance_ledger where order_id = ${orderId} and kind = 'order_refund'`,
  );
const expectAppError = async (promise: Promise<unknown>, code: string) => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
};

/** Places a card order and fulfils it once: stock_short when the stock is short. */
async function shortOrder(lines: Array<[number, number]>) {
  const utr = await placeCardOrder(buyer, lines);
  const { id } = await orderState(app.services.db, utr);
  expect(await fulfilCardOrder(app.services.db, id)).toBe('stock_short');
  return { utr, id };
}

describe('refunds', () => {
  it('refunds an initiate order in full (0 → 2)', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '12.50' }] });
    await stockCodes(app, card.services[0]!.id, 2);
    const before = await balanceOf(buyer.accountId);
    const utr = await placeCardOrder(buyer, [[card.services[0]!.id, 2]]);
    expect(await balanceOf(buyer.accountId)).toBe((Number(before) - 25).toFixed(2));

    expect(await refundOrder(app.services.db, utr, 'Customer asked')).toEqual({ utr, status: 2, refunded_amount: '25.00' });
    const state = await orderState(app.services.db, utr);
    expect(state).toMatchObject({ status: 2, refunded_amount: '25.00', note: 'Customer asked' });
    expect(state.lines[0]).toMatchObject({ codes_owed: 0, assigned: 0 });
    expect(await balanceOf(buyer.accountId)).toBe(before);
    expect([...(await refundRows(state.id))]).toEqual([{ amount: '25.00', reason: 'Customer asked' }]);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('refunds the undelivered part of a stock_short order (3 → 2)', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }, { price: '3.00' }] });
    const [a, b] = card.services;
    await stockCodes(app, a!.id, 1);
    await stockCodes(app, b!.id, 2);
    const { utr, id } = await shortOrder([
      [a!.id, 3],
      [b!.id, 2],
    ]);
    const before = await balanceOf(buyer.accountId);

    expect(await refundOrder(app.services.db, utr, 'Out of stock')).toEqual({ utr, status: 2, refunded_amount: '20.00' });
    const state = await orderState(app.services.db, utr);
    expect(state.lines.map((l) => [l.codes_owed, l.assigned])).toEqual([
      [0, 1],
      [0, 2],
    ]);
    expect(await balanceOf(buyer.accountId)).toBe((Number(before) + 20).toFixed(2));
    expect(await refundRows(id)).toHaveLength(1);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('refunds at most once, even when asked concurrently', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '7.00' }] });
    const { utr, id } = await shortOrder([[card.services[0]!.id, 2]]);
    const before = await balanceOf(buyer.accountId);

    const results = await Promise.allSettled(Array.from({ length: 6 }, () => refundOrder(app.services.db, utr, 'Twice?')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect((r.reason as AppError).code).toBe('invalid_transition');
    }
    await expectAppError(refundOrder(app.services.db, utr, 'Again'), 'invalid_transition');
    expect(await balanceOf(buyer.accountId)).toBe((Number(before) + 14).toFixed(2));
    expect(await refundRows(id)).toHaveLength(1);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('refuses completed orders and unknown utrs, changing nothing', async () => {
    const card = await createCard(app.services.db);
    await stockCodes(app, card.services[0]!.id, 1);
    const utr = await placeCardOrder(buyer, [[card.services[0]!.id, 1]]);
    const { id } = await orderState(app.services.db, utr);
    expect(await fulfilCardOrder(app.services.db, id)).toBe('completed');
    const before = await balanceOf(buyer.accountId);

    await expectAppError(refundOrder(app.services.db, utr, 'Late'), 'invalid_transition');
    await expectAppError(refundOrder(app.services.db, 'NO-SUCH-UTR', 'x'), 'not_found');
    expect((await orderState(app.services.db, utr)).status).toBe(1);
    expect(await balanceOf(buyer.accountId)).toBe(before);
  });

  it('counts undelivered units at the regular price first and releases unused campaign units', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    await createCampaign(app.services.db, { cardServices: [{ serviceId: service.id, price: '5.00', maxSell: 2 }] });
    await stockCodes(app, service.id, 1);
    // 3 units: 2 at the campaign price (5.00), 1 at the regular price (10.00) = 20.00.
    const { utr } = await shortOrder([[service.id, 3]]);
    expect((await orderState(app.services.db, utr)).total).toBe('20.00');
    expect(await offeredSell(service.id)).toBe(2);

    // One unit delivered, counted as a campaign unit: 10.00 + 5.00 come back, one campaign unit is freed.
    expect((await refundOrder(app.services.db, utr, 'Short')).refunded_amount).toBe('15.00');
    expect(await offeredSell(service.id)).toBe(1);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });

  it('keeps campaign units sold once the campaign is over', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const service = card.services[0]!;
    const campaign = await createCampaign(app.services.db, { cardServices: [{ serviceId: service.id, price: '6.00', maxSell: 10 }] });
    const { utr } = await shortOrder([[service.id, 2]]);
    expect(await offeredSell(service.id)).toBe(2);

    await app.services.db.execute(sql`update campaigns set start_date = current_date - 3, end_date = current_date - 1 where id = ${campaign.id}`);
    expect((await refundOrder(app.services.db, utr, 'Short')).refunded_amount).toBe('12.00');
    expect(await offeredSell(service.id)).toBe(2);
  });
});

describe('top-up orders', () => {
  async function placeTopUp(price: string) {
    const topUp = await createTopUp(app.services.db, { services: [{ price }] });
    return placeTopUpOrder(buyer, topUp);
  }

  it('an operator completes an initiate top-up order once (0 → 1)', async () => {
    const utr = await placeTopUp('8.00');
    expect(await completeTopUpOrder(app.services.db, utr, 'Delivered by hand')).toEqual({ utr, status: 1 });
    expect(await orderState(app.services.db, utr)).toMatchObject({ status: 1, note: 'Delivered by hand' });
    await expectAppError(completeTopUpOrder(app.services.db, utr), 'invalid_transition');
    await expectAppError(refundOrder(app.services.db, utr, 'Late'), 'invalid_transition');
    await expectAppError(completeTopUpOrder(app.services.db, 'NO-SUCH-UTR'), 'not_found');
  });

  it('a top-up refund gives back the whole total; card orders cannot be completed by hand', async () => {
    const utr = await placeTopUp('9.99');
    const before = await balanceOf(buyer.accountId);
    expect(await refundOrder(app.services.db, utr, 'Provider refused')).toEqual({ utr, status: 2, refunded_amount: '9.99' });
    expect(await balanceOf(buyer.accountId)).toBe((Number(before) + 9.99).toFixed(2));
    await expectAppError(completeTopUpOrder(app.services.db, utr), 'invalid_transition');

    const card = await createCard(app.services.db);
    const cardUtr = await placeCardOrder(buyer, [[card.services[0]!.id, 1]]);
    await expectAppError(completeTopUpOrder(app.services.db, cardUtr), 'invalid_transition');
    expect((await orderState(app.services.db, cardUtr)).status).toBe(0);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });
});

describe('with workers running', () => {
  it('the fulfilment job of an order refunded before it ran changes nothing', async () => {
    const card = await createCard(app.services.db);
    await stockCodes(app, card.services[0]!.id, 1);
    const utr = await placeCardOrder(buyer, [[card.services[0]!.id, 1]]);
    await refundOrder(app.services.db, utr, 'Changed my mind');
    const refunded = await orderState(app.services.db, utr);

    await app.startWorkers();
    await waitFor('the fulfilment job', async () => (await app.services.queues.fulfilment.getJobState(utr)) === 'completed');
    expect((await app.services.queues.fulfilment.getJob(utr))!.returnvalue).toEqual({ kind: 'card', outcome: 'noop' });
    expect(await orderState(app.services.db, utr)).toEqual(refunded);
    await expectLedgerConsistent(app.services.db, buyer.accountId);
  });
});
