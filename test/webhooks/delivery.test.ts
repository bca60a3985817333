import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbOrTx } from '../../src/db/client.js';
import { newWebhookSecret } from '../../src/lib/webhook-signature.js';
import { ORDER_STATUS, transitionOrder } from '../../src/modules/order-state/state.js';
import { OrderEvent } from '../../src/modules/webhooks/schemas.js';
import { expectJson } from '../helpers/api.js';
import { createCardService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startReceiver, subscribeReceiver } from '../helpers/webhook-receiver.js';
import { createBuyer, placeCardOrder, stockCodes, waitFor, waitForStatus, type Buyer } from '../workers/support.js';

const ADMIN_SECRET = newWebhookSecret();
let app: TestApp;
let operators: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  operators = await startReceiver(ADMIN_SECRET);
  app = await startTestApp({
    workers: true,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', ADMIN_WEBHOOK_URL: operators.url, ADMIN_WEBHOOK_SECRET: ADMIN_SECRET },
    // Retries and lost-job recovery in fractions of a second instead of minutes.
    workerOptions: { webhookRetryDelaysMs: [100, 200, 300], webhookRelay: { intervalMs: 100, lostAfterMs: 1000 } },
  });
});
afterAll(async () => {
  await app?.close();
  await operators?.close();
});

/** A buyer with one endpoint on a fresh receiver; `events` filters it. */
async function subscribedBuyer(events?: string[]) {
  const buyer = await createBuyer(app);
  return { buyer, ...(await subscribeReceiver(buyer.api, events)) };
}

const eventsOf = async (utr: string, db: DbOrTx = app.services.db) =>
  (await db.execute<{ type: string }>(sql`select type from webhook_events where data->>'utr' = ${utr} order by id`)).map((r) => r.type);

describe('order events', () => {
  it('delivers one verified order.completed per status change, with no card codes in it', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const service = await createCardService(app.services.db, '4.00');
    const codes = await stockCodes(app, service.serviceId, 2);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 2]]);
    await waitFor('the completed event', async () => receiver.received.length === 1);
    const [event] = receiver.received;
    expect(event).toMatchObject({
      type: 'order.completed',
      data: { utr, kind: 'card', status: 1, status_label: 'completed', previous_status: 0, price: 8, currency: 'USD' },
    });
    expect(event!.id).toMatch(/^msg_\d+$/);
    // The body is what the OpenAPI document's `webhooks` say, no field more (parsing drops what the schema lacks).
    const body = JSON.parse(event!.raw);
    expect(OrderEvent.parse(body)).toEqual(body);
    for (const code of codes) expect(event!.raw).not.toContain(code);
    expect(receiver.rejected).toEqual([]);
    // The codes come from order lookup instead.
    const details = await expectJson(await buyer.api.get(`/api/order/details?utr=${utr}`), 200);
    expect(details.message.order_details[0].card_codes.sort()).toEqual([...codes].sort());
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
    const metrics = await app.scrape();
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} [1-9]\d*$/m);
    await receiver.close();
  });

  it('follows an order through stock_short, completed and refund, honouring the event filter', async () => {
    const all = await subscribedBuyer();
    const refundsOnly = await subscribedBuyer(['order.refunded']);
    const service = await createCardService(app.services.db, '1.00');
    const waiting = await placeCardOrder(all.buyer, [[service.serviceId, 1]]);
    const refunded = await placeCardOrder(refundsOnly.buyer, [[service.serviceId, 1]]);
    await waitForStatus(app, waiting, ORDER_STATUS.stock_short);
    await waitForStatus(app, refunded, ORDER_STATUS.stock_short);
    const refund = await app.request(`/admin/orders/${refunded}/refund`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'customer asked' }),
    });
    await expectJson(refund, 200);
    await stockCodes(app, service.serviceId, 1);
    const restock = await app.request(`/admin/card-services/${service.serviceId}/codes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ codes: ['ONE-MORE-CODE'] }),
    });
    await expectJson(restock, 200);
    await waitForStatus(app, waiting, ORDER_STATUS.completed);
    await waitFor('both events of the waiting order', async () => all.receiver.received.length === 2);
    await waitFor('the refund event', async () => refundsOnly.receiver.received.length === 1);
    expect(all.receiver.received.map((e) => [e.type, e.data.previous_status, e.data.status])).toEqual([
      ['order.stock_short', 0, 3],
      ['order.completed', 3, 1],
    ]);
    expect(refundsOnly.receiver.received.map((e) => [e.type, e.data.utr, e.data.previous_status])).toEqual([['order.refunded', refunded, 3]]);
    // Another account's endpoint never receives your events.
    expect(all.receiver.received.every((e) => e.data.utr === waiting)).toBe(true);
    await all.receiver.close();
    await refundsOnly.receiver.close();
  });

  it('writes no event for a status change that rolls back', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const service = await createCardService(app.services.db, '1.00');
    await app.services.sql`update card_services set status = 1 where id = ${service.serviceId}`;
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitForStatus(app, utr, ORDER_STATUS.stock_short);
    const [order] = await app.services.sql<{ id: string }[]>`select id from orders where utr = ${utr}`;
    await expect(
      app.services.db.transaction(async (tx) => {
        const moved = await transitionOrder(tx, Number(order!.id), ORDER_STATUS.refund);
        expect(moved?.previousStatus).toBe(ORDER_STATUS.stock_short);
        expect(await eventsOf(utr, tx)).toEqual(['order.stock_short', 'order.refunded']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await eventsOf(utr)).toEqual(['order.stock_short']);
    await waitFor('the stock_short event', async () => receiver.received.length === 1);
    await receiver.close();
  });

  it('writes nothing to the outbox for an account without endpoints', async () => {
    const buyer: Buyer = await createBuyer(app);
    const service = await createCardService(app.services.db, '1.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitForStatus(app, utr, ORDER_STATUS.completed);
    expect(await eventsOf(utr)).toEqual([]);
  });
});

describe('at least once', () => {
  it('retries a receiver that is down until it is up, recording every attempt', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    receiver.answerWith(503);
    const service = await createCardService(app.services.db, '1.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitFor('two failed attempts', async () => receiver.requests() >= 2);
    receiver.answerWith(200);
    await waitFor('the delivery', async () => receiver.received.length === 1);
    expect(receiver.received[0]!.data.utr).toBe(utr);
    // The receiver answers before the worker records the attempt.
    await waitFor('the delivery to be recorded', async () =>
      (await app.services.sql`
        select 1 from webhook_deliveries d join webhook_events e on e.id = d.event_id
        where e.data->>'utr' = ${utr} and d.status = 'delivered'`).length > 0);
    const attempts = await app.services.sql<{ status_code: number; response_excerpt: string }[]>`
      select a.status_code, a.response_excerpt from webhook_attempts a
      join webhook_deliveries d on d.id = a.delivery_id join webhook_events e on e.id = d.event_id
      where e.data->>'utr' = ${utr} order by a.id`;
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.at(-1)).toMatchObject({ status_code: 200, response_excerpt: 'ok' });
    expect(attempts[0]).toMatchObject({ status_code: 503, response_excerpt: 'receiver is down' });
    await receiver.close();
  });

  it('does not follow a redirect: a 3xx is a failed attempt, and the place it points to gets nothing', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    const elsewhere = await startReceiver();
    receiver.answerWith(307, elsewhere.url);
    const service = await createCardService(app.services.db, '1.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitFor('two attempts', async () => receiver.requests() >= 2);
    const [attempt] = await app.services.sql<{ status_code: number }[]>`
      select a.status_code from webhook_attempts a
      join webhook_deliveries d on d.id = a.delivery_id join webhook_events e on e.id = d.event_id
      where e.data->>'utr' = ${utr} order by a.id limit 1`;
    expect(attempt).toEqual({ status_code: 307 });
    expect(elsewhere.requests()).toBe(0);
    await receiver.close();
    await elsewhere.close();
  });

  it('gives up after the last retry, and an operator resends the failed delivery', async () => {
    const { buyer, receiver } = await subscribedBuyer();
    receiver.answerWith(500);
    const service = await createCardService(app.services.db, '1.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    const admin = { Authorization: `Bearer ${app.adminToken}` };
    const failed = await waitFor('the delivery to fail for good', async () => {
      const page = await expectJson(await app.request('/admin/webhook-deliveries?status=failed&per_page=100', { headers: admin }), 200);
      return page.message.data.find((d: { account_id: number; status: string; attempts: number }) => d.account_id === buyer.accountId && d.attempts === 4);
    });
    expect(receiver.requests()).toBe(4);
    receiver.answerWith(200);
    const retried = await expectJson(await app.request(`/admin/webhook-deliveries/${failed.id}/retry`, { method: 'POST', headers: admin }), 200);
    expect(retried.message.status).toBe('pending');
    await waitFor('the resent delivery', async () => receiver.received.length === 1);
    expect(receiver.received[0]!.data.utr).toBe(utr);
    const again = await app.request(`/admin/webhook-deliveries/${failed.id}/retry`, { method: 'POST', headers: admin });
    await waitFor('the delivered status', async () =>
      (await app.services.sql`select 1 from webhook_deliveries where id = ${failed.id} and status = 'delivered'`).length === 1);
    expect([200, 409]).toContain(again.status);
    await receiver.close();
  });

  it('disables an endpoint that has failed for 5 days; its owner re-enables it', async () => {
    const { buyer, endpointId, receiver } = await subscribedBuyer();
    receiver.answerWith(500);
    await app.services.sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = ${endpointId}`;
    await expectJson(await buyer.api.postJson(`/api/webhooks/${endpointId}/test`, {}), 200);
    await waitFor('the endpoint to be disabled', async () => {
      const list = await expectJson(await buyer.api.get('/api/webhooks'), 200);
      return list.message[0].enabled === false && list.message[0].disabled_at !== null;
    });
    const enabled = await expectJson(await buyer.api.postJson(`/api/webhooks/${endpointId}/enable`, {}), 200);
    expect(enabled.message).toMatchObject({ id: endpointId, enabled: true, failing_since: null, disabled_at: null });
    await receiver.close();
  });
});

describe('stock.low for operators', () => {
  it('alerts once per crossing, and again after a restock lifts the stock and it falls again', async () => {
    const service = await createCardService(app.services.db, '1.00');
    // Stocked before it gets a threshold: a threshold over an empty stock would alert at once (the timer's check).
    await stockCodes(app, service.serviceId, 4);
    await app.services.sql`update card_services set low_stock_threshold = 3 where id = ${service.serviceId}`;
    const buyer = await createBuyer(app);
    const alertsFor = () => operators.received.filter((e) => e.type === 'stock.low' && e.data.card_service_id === service.serviceId);
    await waitForStatus(app, await placeCardOrder(buyer, [[service.serviceId, 1]]), ORDER_STATUS.completed); // 3 left: at the threshold
    await waitForStatus(app, await placeCardOrder(buyer, [[service.serviceId, 1]]), ORDER_STATUS.completed); // 2 left: below
    await waitFor('the first alert', async () => alertsFor().length === 1);
    expect(alertsFor()[0]!.data).toEqual({ card_service_id: service.serviceId, card_id: service.cardId, name: expect.any(String), available: 2, threshold: 3 });
    await waitForStatus(app, await placeCardOrder(buyer, [[service.serviceId, 1]]), ORDER_STATUS.completed); // 1 left: still below
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(alertsFor()).toHaveLength(1);

    const restock = await app.request(`/admin/card-services/${service.serviceId}/codes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'text/plain' },
      body: 'LOW-A\nLOW-B\nLOW-C\n',
    });
    expect((await expectJson(restock, 200)).message.added).toBe(3); // 4 left: the alert is re-armed
    await waitForStatus(app, await placeCardOrder(buyer, [[service.serviceId, 2]]), ORDER_STATUS.completed); // 2 left
    await waitFor('the second alert', async () => alertsFor().length === 2);
    expect(operators.rejected).toEqual([]);
  });

  it('alerts from the workers\' timer when codes went without a check (concurrent fulfilments each counting the other\'s codes)', async () => {
    const service = await createCardService(app.services.db, '1.00');
    await stockCodes(app, service.serviceId, 5);
    await app.services.sql`update card_services set low_stock_threshold = 3 where id = ${service.serviceId}`;
    // Four codes leave stock with no fulfilment noting it.
    const [order] = await app.services.sql<{ line: string }[]>`
      select l.id as line from order_lines l join orders o on o.id = l.order_id where o.kind = 'card' order by l.id limit 1`;
    await app.services.sql`
      update card_codes set order_line_id = ${order!.line}, assigned_at = now()
      where id in (select id from card_codes where card_service_id = ${service.serviceId} order by id limit 4)`;
    await waitFor('the alert', async () => operators.received.some((e) => e.type === 'stock.low' && e.data.card_service_id === service.serviceId));
    expect(operators.received.filter((e) => e.type === 'stock.low' && e.data.card_service_id === service.serviceId).map((e) => e.data.available)).toEqual([1]);
  });
});
