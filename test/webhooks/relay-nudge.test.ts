/**
 * The jobs that move orders (fulfilment, restock, top-up routing) nudge the webhook relay: the events they wrote are handed to the
 * queue at once, not at the relay's next interval. The relay here runs every ten minutes, so only a nudge can deliver within the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, client, successMessage, tokenFor } from '../helpers/api.js';
import { createCardService, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { subscribeReceiver } from '../helpers/webhook-receiver.js';
import { createBuyer, placeCardOrder, placeTopUpOrder, stockCodes, waitFor } from '../workers/support.js';

const SUPPLIER_SECRET = 'relay-nudge-secret-0123456789';

let app: TestApp;
let supplier: HttpSupplier;
beforeAll(async () => {
  // Holds every top-up pending for 300 ms: only a status query, made by a routing job, finds it delivered.
  supplier = await startHttpSupplier({ secret: SUPPLIER_SECRET, behaviour: { mode: 'pending', completeAfterMs: 300 } });
  app = await startTestApp({
    workers: true,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    // The reconciler finds restocks to run within 200 ms; it does not nudge the relay, the restock job does. A status
    // query follows a pending answer within about 100 ms.
    workerOptions: { webhookRelay: { intervalMs: 600_000 }, reconciler: { intervalMs: 200 }, settleBaseMs: 100 },
  });
});
afterAll(async () => {
  await app?.close();
  await supplier?.close();
});

async function subscribedBuyer() {
  const buyer = await createBuyer(app);
  return { buyer, ...(await subscribeReceiver(buyer.api)) };
}

describe('the webhook relay, nudged', () => {
  it('delivers the event of an order fulfilment completed without waiting for its interval', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const service = await createCardService(app.services.db, '2.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitFor('the completed event', async () => receiver.received.length === 1, 10_000);
    expect(receiver.received.map((e) => [e.type, e.data.utr])).toEqual([['order.completed', utr]]);
    await receiver.close();
  });

  it('delivers the event of a test order (C25) as the job that completed it ends', async () => {
    const keys = await successMessage(adminOf(app)('POST', '/accounts', { firstname: 'Test', lastname: 'Shop', balance: '0.00' }));
    const testKey = await successMessage(adminOf(app)('POST', `/accounts/${keys.id}/keys`, { mode: 'test' }));
    const test = client(app, await tokenFor(app, { publicKey: testKey.public_key as string, secretKey: testKey.secret_key as string }));
    const { receiver } = await subscribeReceiver(test);
    const service = await createCardService(app.services.db, '2.00');
    const utr = (await successMessage(test.postJson('/api/card/make-order', { service_ids: [service.serviceId], quantities: [1] }))).utr;
    await waitFor('the completed event', async () => receiver.received.length === 1, 10_000);
    expect(receiver.received.map((e) => [e.type, e.data.utr, e.data.livemode])).toEqual([['order.completed', utr, false]]);
    await receiver.close();
  });

  it('delivers the event of an order a restock job completed', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const service = await createCardService(app.services.db, '2.00');
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitFor('the stock_short event', async () => receiver.received.length === 1, 10_000);
    // Codes arrive in the inventory; the reconciler hands the service's restock to a job.
    await stockCodes(app, service.serviceId, 1);
    await waitFor('the completed event', async () => receiver.received.length === 2, 10_000);
    expect(receiver.received.map((e) => [e.type, e.data.utr])).toEqual([
      ['order.stock_short', utr],
      ['order.completed', utr],
    ]);
    await receiver.close();
  });

  it('delivers the event of a top-up a routing job completed, its status query finding it delivered', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const admin = adminOf(app);
    const provider = await successMessage(admin('POST', '/providers', { name: 'Pending supplier', kind: 'http', base_url: supplier.url, credentials: { secret: SUPPLIER_SECRET } }));
    const topUp = await createTopUp(app.services.db, { services: [{ price: '5.00' }] });
    const serviceId = topUp.services[0]!.id;
    await successMessage(admin('PUT', `/top-up-services/${serviceId}/routes`, [{ provider_id: provider.id, product_code: `nudge-${serviceId}`, cost: '4.00' }]));
    const utr = await placeTopUpOrder(buyer, topUp);
    await waitFor('the completed event', async () => receiver.received.length === 1, 10_000);
    expect(receiver.received.map((e) => [e.type, e.data.utr])).toEqual([['order.completed', utr]]);
    // The fulfilment job left it pending at the supplier: the status query of a routing job completed it.
    expect(supplier.statusQueries).toBeGreaterThan(0);
    await receiver.close();
  });
});
