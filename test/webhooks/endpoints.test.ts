import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure, expectJson } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer } from '../workers/support.js';

let app: TestApp;
let strict: TestApp;
beforeAll(async () => {
  [app, strict] = await Promise.all([startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } }), startTestApp()]);
});
afterAll(async () => {
  await app?.close();
  await strict?.close();
});

describe('registering endpoints', () => {
  it('answers the endpoint with its secret once, then lists it without', async () => {
    const buyer = await createBuyer(app);
    const created = await expectJson(await buyer.api.postJson('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['order.completed'] }), 200);
    expect(created.message).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['order.completed'], enabled: true, failing_since: null });
    expect(created.message.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await expectJson(await buyer.api.get('/api/webhooks'), 200);
    expect(listed.message).toEqual([{ ...created.message, secret: undefined }].map(({ secret: _secret, ...rest }) => rest));
    const [row] = await app.services.sql`select secret_sealed from webhook_endpoints where id = ${created.message.id}`;
    expect(Buffer.from(row!.secret_sealed).toString('utf8')).not.toContain(created.message.secret.slice(6));
  });

  it('subscribes to every client event when no filter is given', async () => {
    const buyer = await createBuyer(app);
    const created = await expectJson(await buyer.api.postJson('/api/webhooks', { url: 'https://hooks.example.com/a' }), 200);
    expect(created.message.events).toEqual(['order.completed', 'order.stock_short', 'order.refunded']);
  });

  it('deletes an endpoint', async () => {
    const buyer = await createBuyer(app);
    const created = await expectJson(await buyer.api.postJson('/api/webhooks', { url: 'https://hooks.example.com/b' }), 200);
    expect(await expectJson(await buyer.api.delete(`/api/webhooks/${created.message.id}`), 200)).toEqual({ status: 'success', message: 'Webhook endpoint deleted.' });
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toEqual([]);
    await expectFailure(await buyer.api.delete(`/api/webhooks/${created.message.id}`), 404);
  });
});

describe('validation', () => {
  it.each([
    [{}, 'The url field is required.'],
    [{ url: 'not a url' }, 'The url must be a valid URL.'],
    [{ url: 'https://hooks.example.com', events: [] }, 'The events field is required.'],
    [{ url: 'https://hooks.example.com', events: ['order.shipped'] }, 'The events field must be one of order.completed, order.stock_short, order.refunded.'],
    [{ url: 'https://hooks.example.com', events: 'order.completed' }, 'The events field must be a list of event types.'],
  ])('refuses %j', async (body, message) => {
    const buyer = await createBuyer(app);
    const errors = await expectFailure(await buyer.api.postJson('/api/webhooks', body), 422);
    expect(errors).toEqual([message]);
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toEqual([]);
  });

  it.each([
    ['http://hooks.example.com/x', 'The url must use https.'],
    ['https://127.0.0.1/x', 'The url must not point to a private or loopback address.'],
    ['https://10.1.2.3/x', 'The url must not point to a private or loopback address.'],
    ['https://[::1]/x', 'The url must not point to a private or loopback address.'],
    ['https://localhost/x', 'The url must not point to a private or loopback address.'],
    ['https://user:pw@hooks.example.com/x', 'The url must not contain credentials.'],
  ])('refuses %s without WEBHOOK_ALLOW_PRIVATE', async (url, message) => {
    const buyer = await createBuyer(strict);
    expect(await expectFailure(await buyer.api.postJson('/api/webhooks', { url }), 422)).toEqual([message]);
  });

  it('allows at most 10 endpoints per account', async () => {
    const buyer = await createBuyer(app);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => buyer.api.postJson('/api/webhooks', { url: `https://hooks.example.com/${i}` })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), 409, 409]);
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toHaveLength(10);
  });
});

describe('security', () => {
  it('refuses requests without a valid token', async () => {
    expect((await app.request('/api/webhooks')).status).toBe(401);
    const wrong = await app.request('/api/webhooks', { method: 'POST', headers: { Authorization: 'Bearer nope', 'Content-Type': 'application/json' }, body: '{"url":"https://a.example"}' });
    expect(wrong.status).toBe(401);
  });

  it("treats another account's endpoint as unknown", async () => {
    const owner = await createBuyer(app);
    const other = await createBuyer(app);
    const created = await expectJson(await owner.api.postJson('/api/webhooks', { url: 'https://hooks.example.com/mine' }), 200);
    const unknown = `No webhook endpoint with id ${created.message.id}.`;
    expect(await expectFailure(await other.api.delete(`/api/webhooks/${created.message.id}`), 404)).toBe(unknown);
    expect(await expectFailure(await other.api.postJson(`/api/webhooks/${created.message.id}/test`, {}), 404)).toBe(unknown);
    expect(await expectFailure(await other.api.postJson(`/api/webhooks/${created.message.id}/enable`, {}), 404)).toBe(unknown);
    expect((await expectJson(await other.api.get('/api/webhooks'), 200)).message).toEqual([]);
    expect((await expectJson(await owner.api.get('/api/webhooks'), 200)).message).toHaveLength(1);
  });

  it('keeps the delivery list and resend for operators', async () => {
    expect((await app.request('/admin/webhook-deliveries')).status).toBe(401);
    expect((await app.request('/admin/webhook-deliveries/1/retry', { method: 'POST', headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const admin = { Authorization: `Bearer ${app.adminToken}` };
    expect(await expectFailure(await app.request('/admin/webhook-deliveries/999999/retry', { method: 'POST', headers: admin }), 404)).toBe('No webhook delivery with id 999999.');
    await expectFailure(await app.request('/admin/webhook-deliveries?status=lost', { headers: admin }), 422);
  });
});

describe('operators managing endpoints of an account', () => {
  const admin = () => ({ Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' });

  it('registers and lists an endpoint for an account', async () => {
    const buyer = await createBuyer(app);
    const created = await expectJson(
      await app.request(`/admin/accounts/${buyer.accountId}/webhooks`, { method: 'POST', headers: admin(), body: JSON.stringify({ url: 'https://hooks.example.com/ops' }) }),
      200,
    );
    expect(created.message.secret).toMatch(/^whsec_/);
    const listed = await expectJson(await app.request(`/admin/accounts/${buyer.accountId}/webhooks`, { headers: admin() }), 200);
    expect(listed.message.map((e: { id: number }) => e.id)).toEqual([created.message.id]);
    // The account sees it as its own.
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toHaveLength(1);
  });

  it('answers 404 for an unknown account and 401 without the admin token', async () => {
    expect(await expectFailure(await app.request('/admin/accounts/999999/webhooks', { headers: admin() }), 404)).toBe('No account with id 999999.');
    expect(
      await expectFailure(
        await app.request('/admin/accounts/999999/webhooks', { method: 'POST', headers: admin(), body: JSON.stringify({ url: 'https://hooks.example.com/x' }) }),
        404,
      ),
    ).toBe('No account with id 999999.');
    expect((await app.request('/admin/accounts/1/webhooks')).status).toBe(401);
  });
});
