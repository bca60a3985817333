import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, createTestAccount, expectJson, tokenFor } from '../helpers/api.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('placement while the queue is unreachable', () => {
  it('still answers with the utr and keeps the order in initiate for the reconciler', async () => {
    const keys = await createTestAccount(app);
    const api = client(app, await tokenFor(app, keys));
    const card = await createCard(app.services.db);
    // The enqueue fails as it does when Redis is unreachable.
    const add = vi.spyOn(app.services.queues.fulfilment, 'addBulk').mockRejectedValue(new Error('Connection is closed.'));
    const body = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    const [order] = await app.services.sql`select status from orders where utr = ${body.message.utr}`;
    expect(order).toEqual({ status: 0 });
    expect(add).toHaveBeenCalledWith([{ name: 'fulfil', data: expect.objectContaining({ utr: body.message.utr }), opts: { jobId: body.message.utr } }]);
    add.mockRestore();
  });

  it('does not let a hanging enqueue hold the answer back', async () => {
    const keys = await createTestAccount(app);
    const api = client(app, await tokenFor(app, keys));
    const card = await createCard(app.services.db);
    const add = vi.spyOn(app.services.queues.fulfilment, 'addBulk').mockReturnValue(new Promise(() => {}));
    const started = Date.now();
    const body = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    expect(body.message.utr).toMatch(/^C/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(add).toHaveBeenCalledTimes(1);
    add.mockRestore();
  });
});

describe('hand-off under load', () => {
  it('adds the orders placed at the same moment with one Redis call, each under its utr', async () => {
    const keys = await createTestAccount(app);
    const api = client(app, await tokenFor(app, keys));
    const card = await createCard(app.services.db);
    const addBulk = vi.spyOn(app.services.queues.fulfilment, 'addBulk');
    const bodies = await Promise.all(
      Array.from({ length: 20 }, () => api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }).then((r) => expectJson(r, 200))),
    );
    const added = addBulk.mock.calls.flatMap(([jobs]) => jobs.map((job) => job.opts?.jobId));
    expect(added.sort()).toEqual(bodies.map((b) => b.message.utr).sort());
    for (const { message } of bodies) expect(await app.services.queues.fulfilment.getJob(message.utr)).toBeDefined();
    addBulk.mockRestore();
  });

  it('gathers the hand-offs of one moment into one addBulk', async () => {
    const addBulk = vi.spyOn(app.services.queues.fulfilment, 'addBulk');
    const utrs = Array.from({ length: 10 }, (_, i) => `BATCH${i}${Date.now()}`);
    await Promise.all(utrs.map((utr, i) => app.services.queues.addFulfilment({ orderId: i + 1, utr }, utr)));
    expect(addBulk).toHaveBeenCalledTimes(1);
    expect(addBulk.mock.calls[0]![0].map((job) => job.opts?.jobId)).toEqual(utrs);
    addBulk.mockRestore();
  });
});
