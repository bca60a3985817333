import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRecorder, createWebhookSender, deliverBatch, dueDeliveries, type DeliveryDeps } from '../../src/modules/webhooks/index.js';
import { expectJson } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createBuyer } from '../workers/support.js';

/**
 * How a batch of webhook attempts is recorded (C17), driven here without the workers: a job run again never sends an
 * attempt already recorded, a receiver's odd answer never stops the others being recorded, and an endpoint's failing
 * run follows its attempts in the order they ended.
 */
let app: TestApp;
let deps: DeliveryDeps;
const sender = createWebhookSender();
beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const { config, metrics, logger, db } = app.services;
  deps = { config, metrics, logger, sender, record: attemptRecorder(db) };
});
afterAll(async () => {
  await sender.close();
  await app?.close();
});

/** An endpoint on a fresh receiver with `count` test events waiting, handed over as the relay hands them. */
async function handedEvents(count: number) {
  const buyer = await createBuyer(app);
  const receiver = await startReceiver();
  const body = await expectJson(await buyer.api.postJson('/api/webhooks', { url: receiver.url }), 200);
  receiver.trust(body.message.secret);
  for (let i = 0; i < count; i += 1) await expectJson(await buyer.api.postJson(`/api/webhooks/${body.message.id}/test`, {}), 200);
  const due = await dueDeliveries(app.services.db, { limit: 100, lostAfterMs: 60_000, perEndpoint: 100 });
  return { receiver, endpointId: body.message.id as number, ids: due.filter((d) => d.endpointId === body.message.id).map((d) => d.id) };
}

const deliveries = (ids: number[]) =>
  app.services.sql<{ status: string; attempts: number; last_status_code: number | null }[]>`
    select status, attempts, last_status_code from webhook_deliveries where id = any(${ids}::bigint[]) order by id`;

describe('recording webhook attempts', () => {
  it('a job run again sends none of the attempts it recorded: each waits for its next retry', async () => {
    const { receiver, ids } = await handedEvents(2);
    receiver.answerWith(503);
    expect((await deliverBatch(app.services.db, deps, ids)).map((o) => o.status)).toEqual(['pending', 'pending']);
    expect(receiver.requests()).toBe(2);
    // BullMQ runs a job again after a failure or a stall: nothing is sent before the next attempt is due.
    expect(await deliverBatch(app.services.db, deps, ids)).toEqual([]);
    expect(receiver.requests()).toBe(2);
    expect(await deliveries(ids)).toEqual([
      { status: 'pending', attempts: 1, last_status_code: 503 },
      { status: 'pending', attempts: 1, last_status_code: 503 },
    ]);
    await receiver.close();
  });

  it('records an answer holding a NUL character, and the attempts of other endpoints in the same batch', async () => {
    const odd = await handedEvents(1);
    const plain = await handedEvents(1);
    odd.receiver.answerWith(500, undefined, 'broken\u0000answer');
    const outcomes = await Promise.all([deliverBatch(app.services.db, deps, odd.ids), deliverBatch(app.services.db, deps, plain.ids)]);
    expect(outcomes.flat().map((o) => o.status)).toEqual(['pending', 'delivered']);
    const [attempt] = await app.services.sql<{ response_excerpt: string }[]>`
      select response_excerpt from webhook_attempts where delivery_id = ${odd.ids[0]!}`;
    expect(attempt!.response_excerpt).toBe('broken\uFFFDanswer');
    await odd.receiver.close();
    await plain.receiver.close();
  });

  it('an endpoint failing for 5 days that succeeds and then fails in one batch starts a new failing run, and stays enabled', async () => {
    const { receiver, endpointId, ids } = await handedEvents(2);
    await app.services.sql`update webhook_endpoints set failing_since = now() - interval '6 days' where id = ${endpointId}`;
    const [first, second] = ids as [number, number];
    const rows = await app.services.sql<{ id: number; attempts: number }[]>`
      select id::float8 as id, attempts from webhook_deliveries where id = any(${ids}::bigint[]) order by id`;
    // Two attempts that end together, the success first: recorded in one transaction.
    await Promise.all([
      deps.record({ delivery: { id: first, attempts: rows[0]!.attempts, endpoint_id: endpointId }, status: 'delivered', statusCode: 200 }),
      deps.record({ delivery: { id: second, attempts: rows[1]!.attempts, endpoint_id: endpointId }, status: 'pending', statusCode: 500, nextDelayMs: 5000 }),
    ]);
    const [endpoint] = await app.services.sql<{ enabled: boolean; recent: boolean }[]>`
      select enabled, failing_since > now() - interval '1 minute' as recent from webhook_endpoints where id = ${endpointId}`;
    expect(endpoint).toEqual({ enabled: true, recent: true });
    await receiver.close();
  });
});
