import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fulfilTopUpOrder, httpProvider, ProviderUnavailableError } from '../../src/modules/fulfilment/top-ups.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestAccount } from '../helpers/api.js';
import { createTopUpOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { sleep } from '../helpers/processes.js';

/**
 * C8: whether a top-up was handed to the provider or waits for an operator is recorded on the order,
 * never inferred from a queue job, so the reconciler cannot send a top-up twice once BullMQ has removed
 * its job (after 10,000 completed jobs, or a failed one after 7 days).
 */
const SECRET = 'provider-secret-0123456789';
let provider: Server;
let providerUrl: string;
const posts = new Map<string, Array<string | undefined>>();

let app: TestApp;
let workers: RunningWorkers | null = null;

beforeAll(async () => {
  // A provider that is down: every delivery answers 503 and is remembered with its Idempotency-Key.
  provider = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const utr = String((JSON.parse(body) as { utr: string }).utr);
      posts.set(utr, [...(posts.get(utr) ?? []), req.headers['idempotency-key'] as string | undefined]);
      res.writeHead(503).end();
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/top-ups`;
  app = await startTestApp();
});
afterAll(async () => {
  await workers?.close();
  await app?.close();
  await new Promise((resolve) => provider.close(resolve));
});

async function topUpOrder() {
  const account = await createTestAccount(app, '0.00');
  return createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '6.00', informations: { 'Player id': '42' } });
}

const handoff = async (id: number) =>
  (await app.services.sql<{ status: number; delivery_attempts: number; awaiting: boolean }[]>`
    select status, delivery_attempts, awaiting_operator_since is not null as awaiting from orders where id = ${id}`)[0]!;

/** BullMQ forgets every job of the queue, as its retention limits eventually do. */
const forgetJobs = () => app.services.queues.fulfilment.obliterate({ force: true });

/** Runs the workers with a fast reconciler for a while, then stops them. */
async function reconcileFor(ms: number) {
  workers = await startWorkers(app.services, { reconciler: { intervalMs: 100, staleAfterMs: 0 } });
  await sleep(ms);
  await workers.close();
  workers = null;
}

describe('top-up hand-off recorded on the order (C8)', () => {
  it('a manual top-up waits for an operator and is never enqueued again once its job is gone', async () => {
    const order = await topUpOrder();
    await app.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr });
    workers = await startWorkers(app.services, { reconciler: { intervalMs: 100, staleAfterMs: 0 } });
    await expect.poll(async () => (await handoff(order.id)).awaiting, { timeout: 10_000 }).toBe(true);
    await workers.close();
    workers = null;
    expect(await handoff(order.id)).toMatchObject({ status: 0, awaiting: true });

    await forgetJobs();
    await reconcileFor(1000);
    expect(await app.services.queues.fulfilment.getJobState(order.utr)).toBe('unknown');
  });

  it('an http top-up is retried with its utr as idempotency key, then waits for an operator and is never sent again', async () => {
    const order = await topUpOrder();
    const http = httpProvider(providerUrl, SECRET, 2000);
    await expect(fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 2)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 2)).toBe('awaiting_operator');
    expect(await handoff(order.id)).toEqual({ status: 0, delivery_attempts: 2, awaiting: true });
    expect(posts.get(order.utr)).toEqual([order.utr, order.utr]);

    // Its job long gone, the order is not looked at again, and a stray job does not send it either.
    await forgetJobs();
    await reconcileFor(1000);
    expect(await fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 2)).toBe('noop');
    expect(posts.get(order.utr)).toHaveLength(2);
  });

  it("the delivery budget is the order's own: a lost job does not reset it", async () => {
    const order = await topUpOrder();
    const http = httpProvider(providerUrl, SECRET, 2000);
    await expect(fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 3)).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 3)).rejects.toBeInstanceOf(ProviderUnavailableError);
    // The job is lost; whatever runs the order next sends it once more and then gives it to an operator.
    expect(await fulfilTopUpOrder({ ...app.services, provider: http }, order.id, 3)).toBe('awaiting_operator');
    expect(posts.get(order.utr)).toHaveLength(3);
  });

  it('a top-up whose job failed for good is handed to an operator by the reconciler', async () => {
    // The provider is down and the job gets a single attempt: BullMQ gives up before the order's budget does.
    const withProvider = await startTestApp({ env: { TOPUP_PROVIDER: 'http', TOPUP_PROVIDER_URL: providerUrl, TOPUP_PROVIDER_SECRET: SECRET } });
    try {
      const account = await createTestAccount(withProvider, '0.00');
      const order = await createTopUpOrder(withProvider.services.db, { accountId: account.id, unitPrice: '6.00' });
      const queue = withProvider.services.queues.fulfilment;
      await queue.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr, attempts: 1 });
      const running = await startWorkers(withProvider.services, { reconciler: { intervalMs: 100, staleAfterMs: 0 } });
      try {
        const awaiting = async () =>
          (await withProvider.services.sql`select awaiting_operator_since is not null as a from orders where id = ${order.id}`)[0]!.a;
        await expect.poll(awaiting, { timeout: 10_000 }).toBe(true);
        expect(await queue.getJobState(order.utr)).toBe('failed');
      } finally {
        await running.close();
      }
      expect(posts.get(order.utr)).toHaveLength(1);
    } finally {
      await withProvider.close();
    }
  });
});
