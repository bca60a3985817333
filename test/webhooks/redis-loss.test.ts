import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dueDeliveries } from '../../src/modules/webhooks/index.js';
import { webhookJobs } from '../../src/queues/index.js';
import { ORDER_STATUS, transitionOrder } from '../../src/modules/order-state/state.js';
import { expectJson } from '../helpers/api.js';
import { createCardService, createOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createBuyer, waitFor } from '../workers/support.js';

let app: TestApp;
beforeAll(async () => {
  // Workers start later, by the test, so that queued jobs wait in Redis when Redis loses them.
  app = await startTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    workerOptions: { webhookRelay: { intervalMs: 100, lostAfterMs: 1000 } },
  });
});
afterAll(async () => app?.close());

it('delivers every event whose queued job Redis lost, from the outbox in PostgreSQL', async () => {
  const buyer = await createBuyer(app);
  const receiver = await startReceiver();
  const registered = await expectJson(await buyer.api.postJson('/api/webhooks', { url: receiver.url }), 200);
  receiver.trust(registered.message.secret);
  const service = await createCardService(app.services.db, '2.00');
  const utrs: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const order = await createOrder(app.services.db, { accountId: buyer.accountId, ...service, codesOwed: 1 });
    expect(await transitionOrder(app.services.db, order.id, ORDER_STATUS.stock_short)).not.toBeNull();
    utrs.push(order.utr);
  }
  // The relay hands the five deliveries to the queue as it would…
  const due = await dueDeliveries(app.services.db, { limit: 100, lostAfterMs: 60_000, perEndpoint: 16 });
  expect(due).toHaveLength(5);
  await app.services.queues.webhooks.addBulk(webhookJobs(due));
  // …and then Redis loses everything this service kept there (a restart without persistence).
  const keys = await app.services.redis.keys(`${app.services.config.BULLMQ_PREFIX}:*`);
  await app.services.redis.del(...keys);
  expect(await app.services.queues.webhooks.count()).toBe(0);

  await app.startWorkers();
  await waitFor('all five events', async () => receiver.received.length >= 5, 30_000);
  expect(receiver.received.map((e) => e.data.utr).sort()).toEqual([...utrs].sort());
  await waitFor('every delivery recorded as delivered', async () => {
    const [row] = await app.services.db.execute<{ open: number }>(
      sql`select count(*)::int as open from webhook_deliveries where status <> 'delivered'`,
    );
    return row!.open === 0;
  });
  await receiver.close();
});
