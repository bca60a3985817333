import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestAccount } from '../helpers/api.js';
import { createTopUpOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { sleep } from '../helpers/processes.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';

/**
 * C8: whether a top-up was handed to a provider or waits for an operator is recorded on the order (its attempts, its
 * operator flag), never inferred from a queue job, so the reconciler can neither send a top-up twice nor forget one
 * once BullMQ has removed its jobs (after 10,000 completed jobs, or a failed one after 7 days, or with Redis's data).
 */
const SECRET = 'provider-secret-0123456789';
let supplier: HttpSupplier;
let manual: TestApp;
let viaProvider: TestApp;
let workers: RunningWorkers | null = null;

beforeAll(async () => {
  supplier = await startHttpSupplier({ secret: SECRET, behaviour: { mode: 'pending', completeAfterMs: 3_600_000 } });
  manual = await startTestApp();
  viaProvider = await startTestApp({ env: { TOPUP_PROVIDER: 'http', TOPUP_PROVIDER_URL: supplier.url, TOPUP_PROVIDER_SECRET: SECRET } });
});
afterAll(async () => {
  await workers?.close();
  await manual?.close();
  await viaProvider?.close();
  await supplier?.close();
});

async function topUpOrder(app: TestApp) {
  const account = await createTestAccount(app, '0.00');
  return createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '6.00', informations: { 'Player id': '42' } });
}

const handoff = async (app: TestApp, id: number) =>
  (await app.services.sql<{ status: number; awaiting: boolean; note: string | null; step: number }[]>`
    select status, awaiting_operator_since is not null as awaiting, note, routing_step as step from orders where id = ${id}`)[0]!;

/** BullMQ forgets every job of the queues, as its retention limits eventually do (or Redis losing its data). */
const forgetJobs = async (app: TestApp) => {
  for (const queue of [app.services.queues.fulfilment, app.services.queues.routing]) await queue.obliterate({ force: true });
};

/** Runs the workers with a fast reconciler for a while, then stops them. */
async function reconcileFor(app: TestApp, ms: number) {
  workers = await startWorkers(app.services, { settleBaseMs: 100, reconciler: { intervalMs: 100, staleAfterMs: 0 } });
  await sleep(ms);
  await workers.close();
  workers = null;
}

describe('top-up hand-off recorded on the order (C8)', () => {
  it('a top-up with no route to go to waits for an operator and is never enqueued again once its job is gone', async () => {
    const order = await topUpOrder(manual);
    await manual.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr });
    workers = await startWorkers(manual.services, { reconciler: { intervalMs: 100, staleAfterMs: 0 } });
    await expect.poll(async () => (await handoff(manual, order.id)).awaiting, { timeout: 10_000 }).toBe(true);
    await workers.close();
    workers = null;
    expect(await handoff(manual, order.id)).toMatchObject({ status: 0, awaiting: true, note: 'The service has no provider routes left.' });

    await forgetJobs(manual);
    await reconcileFor(manual, 1000);
    expect(await manual.services.queues.fulfilment.getJobState(order.utr)).toBe('unknown');
    expect(await handoff(manual, order.id)).toMatchObject({ status: 0, awaiting: true, step: 0 });
  });

  it('a top-up whose jobs are all gone is routed again by the reconciler: its provider is asked, never sent it twice', async () => {
    const order = await topUpOrder(viaProvider);
    await viaProvider.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr });
    workers = await startWorkers(viaProvider.services, { settleBaseMs: 60_000, reconciler: { intervalMs: 100, staleAfterMs: 60_000 } });
    await expect.poll(() => supplier.ledger.get(order.utr)?.status, { timeout: 10_000 }).toBe('pending');
    await workers.close();
    workers = null;
    const received = supplier.received;
    const queries = supplier.statusQueries;

    // Its status query was a delayed job a minute away; Redis forgets it.
    await forgetJobs(viaProvider);
    await reconcileFor(viaProvider, 1500);
    expect(supplier.statusQueries).toBeGreaterThan(queries);
    expect(supplier.received).toBe(received);
    expect(supplier.ledger.get(order.utr)?.deliveries).toBe(0);
    expect(await handoff(viaProvider, order.id)).toMatchObject({ status: 0, awaiting: false });
  });
});
