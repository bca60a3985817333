import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { client, createTestAccount, expectJson, tokenFor, type Json } from '../helpers/api.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { createBuyer, placeTopUpOrder, stockCodes, waitFor, waitForStatus } from '../workers/support.js';

let app: TestApp;
const written: string[] = [];
/** Every line the service logged so far, parsed (each must be one JSON object). */
const lines = (): Json[] => written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Json);

beforeAll(async () => {
  app = await startTestApp();
  // Requests and jobs log through the services' logger: collect its lines, at the default level.
  app.services.logger = createLogger('info', { write: (chunk: string) => void written.push(chunk) });
  await app.startWorkers();
});
afterAll(() => app.close());

const newRequestId = () => `req-${randomBytes(6).toString('hex')}`;

/** The lines of one request id, once the line `until` says is there. */
const trailOf = (requestId: string, until: string) =>
  waitFor(`the "${until}" line of ${requestId}`, async () => {
    const trail = lines().filter((line) => line.requestId === requestId);
    return trail.some((line) => line.msg === until) && trail;
  });

describe('one request id', () => {
  it('leads from the request line to the job lines and the status change of the order it placed', async () => {
    const card = await createCard(app.services.db);
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 1);
    const buyer = await createBuyer(app);
    const requestId = newRequestId();

    const response = await buyer.api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }, { 'X-Request-Id': requestId });
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const { utr } = (await expectJson(response, 200)).message as { utr: string };
    await waitForStatus(app, utr, 1);

    const trail = await trailOf(requestId, 'job finished');
    const job = { queue: 'order-fulfilment', jobId: utr };
    expect(trail.find((line) => line.msg === 'request')).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/api/card/make-order',
      status: 200,
      accountId: buyer.accountId,
      durationMs: expect.any(Number),
    });
    expect(trail.find((line) => line.msg === 'order placed')).toMatchObject({ utr, kind: 'card' });
    expect(trail.find((line) => line.msg === 'job started')).toMatchObject({ ...job, utr, attempt: 1 });
    expect(trail.find((line) => line.msg === 'order status changed')).toMatchObject({ ...job, utr, kind: 'card', from: 'initiate', to: 'completed' });
    expect(trail.find((line) => line.msg === 'job finished')).toMatchObject({ ...job, utr, durationMs: expect.any(Number) });
    expect(trail.map((line) => line.msg).sort()).toEqual(['job finished', 'job started', 'order placed', 'order status changed', 'request']);
  });

  it("carries an operator's status change under the operator's request", async () => {
    const topUp = await createTopUp(app.services.db);
    const buyer = await createBuyer(app);
    const utr = await placeTopUpOrder(buyer, topUp);
    await waitFor('the top-up to wait for an operator', async () =>
      lines().some((line) => line.msg === 'job finished' && line.jobId === utr),
    );
    const requestId = newRequestId();
    const response = await app.request(`/admin/orders/${utr}/refund`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json', 'X-Request-Id': requestId },
      body: JSON.stringify({ reason: 'customer cancelled' }),
    });
    await expectJson(response, 200);

    const trail = await trailOf(requestId, 'request');
    expect(trail.find((line) => line.msg === 'order status changed')).toMatchObject({ utr, kind: 'top_up', from: 'initiate', to: 'refund' });
    // An operator is no account: the request line names none.
    expect(trail.find((line) => line.msg === 'request')).toMatchObject({ route: '/admin/orders/:utr/refund', status: 200 });
    expect(trail.find((line) => line.msg === 'request')).not.toHaveProperty('accountId');
  });
});

describe('test mode (C25)', () => {
  it("says mode: test on the request, placement and status-change lines of a test key's order; live lines say live", async () => {
    const card = await createCard(app.services.db);
    const serviceId = card.services[0]!.id;
    const account = await createTestAccount(app);
    const key = await expectJson(await app.request(`/admin/accounts/${account.id}/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'test' }),
    }), 200);
    const api = client(app, await tokenFor(app, { publicKey: key.message.public_key, secretKey: key.message.secret_key }));
    const requestId = newRequestId();
    const { utr } = (await expectJson(await api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }, { 'X-Request-Id': requestId }), 200)).message as { utr: string };
    const trail = await trailOf(requestId, 'order status changed');
    expect(trail.find((line) => line.msg === 'request')).toMatchObject({ route: '/api/card/make-order', status: 200, mode: 'test' });
    expect(trail.find((line) => line.msg === 'order placed')).toMatchObject({ utr, kind: 'card', mode: 'test' });
    expect(trail.find((line) => line.msg === 'order status changed')).toMatchObject({ utr, mode: 'test', to: 'completed' });
    // A live token's request line has no mode; its order's lines say live.
    expect(lines().filter((line) => line.msg === 'order placed' && line.utr !== utr).every((line) => line.mode === 'live')).toBe(true);
  });
});

describe('top-up suppliers', () => {
  it('log one line per provider attempt, under the request that placed the order, never the credentials', async () => {
    const secret = `log-test-secret-${randomBytes(8).toString('hex')}`;
    const supplier = await startHttpSupplier({ secret });
    try {
      const admin = (method: string, path: string, body: unknown) =>
        app.request(`/admin${path}`, { method, headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const provider = (await expectJson(await admin('POST', '/providers', { name: 'Logged supplier', kind: 'http', base_url: supplier.url, credentials: { secret } }), 200)).message;
      const topUp = await createTopUp(app.services.db);
      await expectJson(await admin('PUT', `/top-up-services/${topUp.services[0]!.id}/routes`, [{ provider_id: provider.id, product_code: 'LOGGED' }]), 200);
      const buyer = await createBuyer(app);
      const requestId = newRequestId();
      const response = await buyer.api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id) }, { 'X-Request-Id': requestId });
      await expectJson(response, 200);

      const trail = await trailOf(requestId, 'order status changed');
      const attempt = trail.find((line) => line.msg === 'provider attempt');
      expect(attempt).toMatchObject({ provider: 'Logged supplier', request: 'send', outcome: 'completed', queue: 'order-fulfilment' });
      expect(attempt!.utr).toMatch(/^T/);
      expect(written.join('')).not.toContain(secret);
    } finally {
      await supplier.close();
    }
  });
});

describe('what the log never holds', () => {
  it('secret keys, tokens, api keys, order-form values or card codes', async () => {
    const keys = await createTestAccount(app);
    const token = await tokenFor(app, keys);
    const api = client(app, token);
    // A refused exchange too: its key pair is as secret as an accepted one.
    await app.request('/api/generate/authorization-token', { method: 'POST', headers: { PublicKey: keys.publicKey, SecretKey: `${keys.secretKey}x` } });

    const card = await createCard(app.services.db);
    const [code] = await stockCodes(app, card.services[0]!.id, 1, 'SECRETCODE');
    const { utr } = (await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200)).message;
    await waitForStatus(app, utr as string, 1);
    const orders = await expectJson(await api.get('/api/get-card/orders'), 200);
    expect(JSON.stringify(orders)).toContain(code);

    const playerId = `player-${randomBytes(6).toString('hex')}`;
    const topUp = await createTopUp(app.services.db, {
      orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
    });
    await expectJson(await api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id), player_id: playerId }), 200);

    await expectJson(await app.request(`/license-api/account/details?api_key=${keys.apiKey}`), 200);
    // An account with no items: 404, after its key was read all the same.
    await expectJson(await app.request('/license-api/items/all', { headers: { 'X-API-Key': keys.apiKey } }), 404);

    // Every request above has its line (the list of orders with the code in its answer among them).
    await waitFor('the request lines', async () => lines().filter((line) => line.msg === 'request' && line.accountId === keys.id).length >= 5);
    const log = written.join('');
    for (const [what, secret] of Object.entries({ secretKey: keys.secretKey, token, apiKey: keys.apiKey, playerId, code: code! })) {
      expect(log.includes(secret), `${what} in the log`).toBe(false);
    }
    expect(log).not.toContain('api_key');
  });
});
