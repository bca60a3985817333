import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { subscribeReceiver } from '../helpers/webhook-receiver.js';
import { createBuyer, waitFor } from '../workers/support.js';

/**
 * Delivery that keeps up (C17): an endpoint never has more than WEBHOOK_ENDPOINT_IN_FLIGHT deliveries on their way,
 * so a slow receiver keeps its backlog to itself, and deliveries to one origin reuse their connections.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    workers: true,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ENDPOINT_IN_FLIGHT: '2' },
    workerOptions: { webhookRelay: { intervalMs: 50, lostAfterMs: 60_000 } },
  });
});
afterAll(async () => app?.close());

/** A buyer with one endpoint on a fresh receiver. */
async function subscribed() {
  const buyer = await createBuyer(app);
  const { receiver, endpointId } = await subscribeReceiver(buyer.api);
  const sendTests = async (count: number) => {
    for (let i = 0; i < count; i += 1) await expectJson(await buyer.api.postJson(`/api/webhooks/${endpointId}/test`, {}), 200);
  };
  return { receiver, sendTests };
}

describe('webhook delivery that keeps up', () => {
  it('holds at most WEBHOOK_ENDPOINT_IN_FLIGHT deliveries of a slow endpoint at once, and never makes another wait for it', async () => {
    const slow = await subscribed();
    const fast = await subscribed();
    slow.receiver.answerAfter(1500);
    await slow.sendTests(8);
    await waitFor('the slow receiver to hold its first deliveries', async () => slow.receiver.mostInFlight() > 0);
    const asked = Date.now();
    await fast.sendTests(4);
    await waitFor('the fast endpoint to get its four events', async () => fast.receiver.received.length === 4, 10_000);
    // Well before the slow receiver has answered even its second pair.
    expect(Date.now() - asked).toBeLessThan(1500);
    await waitFor('the slow endpoint to get its eight events', async () => slow.receiver.received.length === 8, 30_000);
    expect(slow.receiver.mostInFlight()).toBe(2);
    await slow.receiver.close();
    await fast.receiver.close();
  }, 60_000);

  it('sends the deliveries to one origin over kept-alive connections', async () => {
    const { receiver, sendTests } = await subscribed();
    for (let wave = 1; wave <= 4; wave += 1) {
      await sendTests(5);
      await waitFor(`wave ${wave}`, async () => receiver.received.length === wave * 5, 10_000);
    }
    // One connection per delivery without keep-alive: 20.
    expect(receiver.connections()).toBeLessThanOrEqual(4);
    await receiver.close();
  }, 60_000);
});
