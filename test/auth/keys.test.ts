/**
 * C25/C26: an account's keys as a resource. Key pairs issued (the secret shown once), listed (no secrets, last use)
 * and revoked (their tokens stop at once, in this process and another); read-scope keys whose tokens only read; the
 * pair an account was opened with as its first live, full key; rotating keys without a moment without a working one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, createTestAccount, expectFailure, expectJson, successMessage, type Json } from '../helpers/api.js';
import { createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';

let app: TestApp;
let writes: () => Promise<number>;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);
const ok = successMessage;

beforeAll(async () => {
  app = await startTestApp();
  writes = (await watchWrites(app.services.sql)).count;
});
afterAll(async () => app?.close());

const exchange = (publicKey: string, secretKey: string, baseUrl = app.baseUrl) =>
  fetch(`${baseUrl}/api/generate/authorization-token`, { method: 'POST', headers: { PublicKey: publicKey, SecretKey: secretKey } });
const tokenOf = async (publicKey: string, secretKey: string) => (await expectJson(await exchange(publicKey, secretKey), 200)).bearer_token as string;
const get = (token: string, path: string, baseUrl = app.baseUrl) => fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
const post = (token: string, path: string, body: unknown) =>
  app.request(path, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('keys as a resource', () => {
  it("an account's first key is the pair it was opened with; more keys are issued, listed without secrets, and work", async () => {
    const account = await createTestAccount(app);
    const [first] = (await ok(admin('GET', `/accounts/${account.id}/keys`))) as Json[];
    expect(first).toMatchObject({ public_key: account.publicKey, mode: 'live', scope: 'full', last_used_at: null, revoked_at: null });

    const issued = await ok(admin('POST', `/accounts/${account.id}/keys`, { mode: 'live' }));
    expect(issued).toEqual({ public_key: expect.stringMatching(/^pk_/), secret_key: expect.stringMatching(/^sk_/), mode: 'live', scope: 'full' });
    await tokenOf(issued.public_key, issued.secret_key);
    const listed = (await ok(admin('GET', `/accounts/${account.id}/keys`))) as Json[];
    expect(listed.map((k) => k.public_key)).toEqual([account.publicKey, issued.public_key]);
    expect(listed[1]!.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(issued.secret_key);
  });

  it('rotating without downtime: a second live key, then the old one revoked; the new one never stops working', async () => {
    const account = await createTestAccount(app);
    const oldToken = await tokenOf(account.publicKey, account.secretKey);
    const fresh = await ok(admin('POST', `/accounts/${account.id}/keys`, { mode: 'live' }));
    const newToken = await tokenOf(fresh.public_key, fresh.secret_key);
    for (const token of [oldToken, newToken]) await expectJson(await get(token, '/api/get-category'), 200);

    const revoked = await ok(admin('DELETE', `/accounts/${account.id}/keys/${account.publicKey}`));
    expect(revoked).toEqual({ public_key: account.publicKey, revoked_at: expect.any(String) });
    expect(await expectFailure(await get(oldToken, '/api/get-category'), 401)).toBe('Unauthenticated.');
    expect(await expectFailure(await exchange(account.publicKey, account.secretKey), 401)).toBe('Invalid public key or secret key.');
    await expectJson(await get(newToken, '/api/get-category'), 200);
    await tokenOf(fresh.public_key, fresh.secret_key);
  });

  it("a revoked key's tokens stop at once in this process (the cached-read lane too) and in another within a second", async () => {
    const account = await createTestAccount(app);
    const peer = await app.peer();
    try {
      const token = await tokenOf(account.publicKey, account.secretKey);
      // Both processes have checked the token and keep the answer as bytes: the next reads take the lane.
      for (const base of [app.baseUrl, peer.baseUrl]) for (let i = 0; i < 3; i++) await expectJson(await get(token, '/api/get-category', base), 200);
      await ok(admin('DELETE', `/accounts/${account.id}/keys/${account.publicKey}`));
      expect((await get(token, '/api/get-category')).status).toBe(401);
      await expect.poll(async () => (await get(token, '/api/get-category', peer.baseUrl)).status, { timeout: 1000, interval: 50 }).toBe(401);
    } finally {
      await peer.close();
    }
  });

  it('a token issued before keys were kept apart is one of the first key: it works until that key is revoked', async () => {
    const account = await createTestAccount(app);
    const token = await tokenOf(account.publicKey, account.secretKey);
    await app.services.sql`update auth_tokens set key_id = null where account_id = ${account.id}`;
    await app.services.tokenCache.invalidate();
    await expectJson(await get(token, '/api/get-category'), 200);
    await ok(admin('DELETE', `/accounts/${account.id}/keys/${account.publicKey}`));
    expect((await get(token, '/api/get-category')).status).toBe(401);
  });

  it('an account opened by a process of the previous release (its pair only in accounts) gets its first key on its first exchange', async () => {
    const account = await createTestAccount(app);
    await app.services.sql`delete from account_keys where account_id = ${account.id}`;
    await tokenOf(account.publicKey, account.secretKey);
    const keys = (await ok(admin('GET', `/accounts/${account.id}/keys`))) as Json[];
    expect(keys).toEqual([expect.objectContaining({ public_key: account.publicKey, mode: 'live', scope: 'full', revoked_at: null })]);
    expect(await expectFailure(await exchange(account.publicKey, 'sk_wrong'), 401)).toBe('Invalid public key or secret key.');
  });
});

describe('read-scope keys (C26)', () => {
  it('read: catalog, orders, statement, webhooks list and the player check; any write is a 403 that writes nothing', async () => {
    const account = await createTestAccount(app);
    const reader = await ok(admin('POST', `/accounts/${account.id}/keys`, { mode: 'live', scope: 'read' }));
    expect(reader.scope).toBe('read');
    const token = await tokenOf(reader.public_key, reader.secret_key);
    for (const path of ['/api/get-category', '/api/get-card/orders', '/api/account/statement', '/api/webhooks']) await expectJson(await get(token, path), 200);

    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const topUp = await createTopUp(app.services.db);
    const before = await writes();
    // The player check places nothing (C27): it is a read, whatever its method.
    expect((await expectJson(await post(token, '/api/top-up/check-player', { topUpId: topUp.id, serviceId: topUp.services[0]!.id }), 200)).message).toMatchObject({ valid: true });
    for (const [path, body] of [
      ['/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }],
      ['/api/webhooks', { url: 'https://shop.example.com/hooks' }],
      ['/api/card/review', { card_id: card.id, rating: 5, comment: 'x' }],
      ['/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id }],
    ] as const) {
      const refused = await post(token, path, body);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ status: 'failed', errors: 'This key can only read.' });
    }
    expect(await writes()).toBe(before);
    // The account's full key still writes.
    await expectJson(await post(await tokenOf(account.publicKey, account.secretKey), '/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
  });
});

describe('refusals', () => {
  it('an unknown account or key is a 404, a bad mode or scope a 422, nothing written', async () => {
    const account = await createTestAccount(app);
    const other = await createTestAccount(app);
    const before = await writes();
    expect(await expectFailure(await admin('POST', '/accounts/999999/keys', { mode: 'live' }), 404)).toBe('No account with id 999999.');
    expect(await expectFailure(await admin('GET', '/accounts/999999/keys'), 404)).toBe('No account with id 999999.');
    expect(await expectFailure(await admin('DELETE', `/accounts/${account.id}/keys/pk_nope`), 404)).toBe('No key with the public key "pk_nope".');
    expect(await expectFailure(await admin('POST', `/accounts/${account.id}/keys`, { mode: 'sandbox', scope: 'all' }), 422)).toEqual([
      'The mode field must be live or test.',
      'The scope field must be full or read.',
    ]);
    // A key that spends real money is never the default: the mode is asked for.
    expect(await expectFailure(await admin('POST', `/accounts/${account.id}/keys`, {}), 422)).toEqual(['The mode field is required.']);
    expect(await expectFailure(await admin('POST', `/accounts/${account.id}/keys`, { scope: 'read' }), 422)).toEqual(['The mode field is required.']);
    // Another account's key is not this account's to revoke.
    expect((await admin('DELETE', `/accounts/${account.id}/keys/${other.publicKey}`)).status).toBe(404);
    expect(await writes()).toBe(before);
    await tokenOf(other.publicKey, other.secretKey);
  });
});
