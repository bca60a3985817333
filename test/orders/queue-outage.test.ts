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
    const add = vi.spyOn(app.services.queues.fulfilment, 'add').mockRejectedValue(new Error('Connection is closed.'));
    const body = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    const [order] = await app.services.sql`select status from orders where utr = ${body.message.utr}`;
    expect(order).toEqual({ status: 0 });
    expect(add).toHaveBeenCalledWith('fulfil', expect.objectContaining({ utr: body.message.utr }), { jobId: body.message.utr });
    add.mockRestore();
  });

  it('does not let a hanging enqueue hold the answer back', async () => {
    const keys = await createTestAccount(app);
    const api = client(app, await tokenFor(app, keys));
    const card = await createCard(app.services.db);
    const add = vi.spyOn(app.services.queues.fulfilment, 'add').mockReturnValue(new Promise(() => {}));
    const started = Date.now();
    const body = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    expect(body.message.utr).toMatch(/^C/);
    expect(Date.now() - started).toBeLessThan(5000);
    add.mockRestore();
  });
});
