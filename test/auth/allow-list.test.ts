/**
 * C26: an account's address allow-list (IPv4, IPv6, CIDR), checked at token exchange and on every Interface A request
 * (the cached-read lane too) with C21's client-address rule: here TRUST_PROXY=true, so the address is the last
 * X-Forwarded-For entry, as behind a load balancer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, createTestAccount, expectFailure, expectJson, successMessage, type Json } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';

let app: TestApp;
let writes: () => Promise<number>;
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

beforeAll(async () => {
  app = await startTestApp({ env: { TRUST_PROXY: 'true', AUTH_FAILURES_PER_KEY: '5' } });
  writes = (await watchWrites(app.services.sql)).count;
});
afterAll(async () => app?.close());

const exchange = (from: string, publicKey: string, secretKey: string) =>
  fetch(`${app.baseUrl}/api/generate/authorization-token`, { method: 'POST', headers: { PublicKey: publicKey, SecretKey: secretKey, 'X-Forwarded-For': from } });
const tokenFrom = async (from: string, account: { publicKey: string; secretKey: string }) =>
  (await expectJson(await exchange(from, account.publicKey, account.secretKey), 200)).bearer_token as string;
const request = (from: string, token: string, path: string, init: RequestInit = {}) =>
  fetch(`${app.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': from, 'Content-Type': 'application/json' } });
const allow = (accountId: number, allowed_ips: string[]) => successMessage(admin('PATCH', `/accounts/${accountId}`, { allowed_ips }));
const refusal = (address: string) => `Requests from ${address} are not allowed for this account.`;

describe('an account with an allow-list', () => {
  it('takes token exchanges and requests from its addresses and ranges, IPv4 and IPv6, and refuses others naming the address', async () => {
    const account = await createTestAccount(app);
    const token = await tokenFrom('192.0.2.1', account);
    const settings = await allow(account.id, ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    expect(settings).toMatchObject({ id: account.id, allowed_ips: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'] });

    for (const from of ['203.0.113.7', '198.51.100.200', '2001:db8:1::5', '::ffff:198.51.100.9']) {
      await tokenFrom(from, account);
      await expectJson(await request(from, token, '/api/get-category'), 200);
    }
    for (const from of ['192.0.2.1', '203.0.113.8', '198.51.101.1', '2001:db9::1']) {
      expect(await expectFailure(await exchange(from, account.publicKey, account.secretKey), 403)).toBe(refusal(from));
      expect(await expectFailure(await request(from, token, '/api/get-category'), 403)).toBe(refusal(from));
    }
    // A dual-stack socket's form of an IPv4 address is named as the address it carries.
    expect(await expectFailure(await request('::ffff:192.0.2.9', token, '/api/get-category'), 403)).toBe(refusal('192.0.2.9'));
  });

  it('refuses a write from elsewhere before it writes anything', async () => {
    const account = await createTestAccount(app);
    const token = await tokenFrom('203.0.113.7', account);
    await allow(account.id, ['203.0.113.7']);
    const before = await writes();
    const refused = await request('192.0.2.1', token, '/api/webhooks', { method: 'POST', body: JSON.stringify({ url: 'https://shop.example.com/hooks' }) });
    expect(await expectFailure(refused, 403)).toBe(refusal('192.0.2.1'));
    expect(await writes()).toBe(before);
  });

  it('applies at once to tokens already checked, the cached-read lane included, and [] allows any address again', async () => {
    const account = await createTestAccount(app);
    const token = await tokenFrom('192.0.2.1', account);
    // The token is checked and the read kept as bytes: the next reads take the lane.
    for (let i = 0; i < 3; i++) await expectJson(await request('192.0.2.1', token, '/api/get-category'), 200);
    await allow(account.id, ['203.0.113.0/24']);
    expect(await expectFailure(await request('192.0.2.1', token, '/api/get-category'), 403)).toBe(refusal('192.0.2.1'));
    for (let i = 0; i < 3; i++) await expectJson(await request('203.0.113.40', token, '/api/get-category'), 200);
    // The token is checked again, with its list: a read the lane would answer is refused from elsewhere.
    expect(await expectFailure(await request('192.0.2.2', token, '/api/get-category'), 403)).toBe(refusal('192.0.2.2'));
    await allow(account.id, []);
    await expectJson(await request('192.0.2.1', token, '/api/get-category'), 200);
  });

  it('the right pair from an address not allowed is no failed attempt: it never locks the key out there', async () => {
    const account = await createTestAccount(app);
    await allow(account.id, ['203.0.113.7']);
    // More refusals than AUTH_FAILURES_PER_KEY (5) from one address.
    for (let i = 0; i < 8; i++) await expectFailure(await exchange('192.0.2.50', account.publicKey, account.secretKey), 403);
    await allow(account.id, []);
    await tokenFrom('192.0.2.50', account);
    // A wrong secret from an address not allowed is a failure like any other, and says nothing about the list.
    await allow(account.id, ['203.0.113.7']);
    expect(await expectFailure(await exchange('192.0.2.51', account.publicKey, 'sk_wrong'), 401)).toBe('Invalid public key or secret key.');
  });

  it('other accounts are not touched by one account’s list', async () => {
    const listed = await createTestAccount(app);
    const other = await createTestAccount(app);
    await allow(listed.id, ['203.0.113.7']);
    const token = await tokenFrom('192.0.2.1', other);
    await expectJson(await request('192.0.2.1', token, '/api/get-category'), 200);
  });
});

describe('setting the list', () => {
  it('refuses what is not an address or range, naming the entry, and writes nothing', async () => {
    const account = await createTestAccount(app);
    const before = await writes();
    for (const [allowed_ips, message] of [
      [['203.0.113.7', 'example.com'], 'The allowed ips field must hold IPv4 or IPv6 addresses and CIDR ranges: "example.com" is neither.'],
      [['198.51.100.0/33'], 'The allowed ips field must hold IPv4 or IPv6 addresses and CIDR ranges: "198.51.100.0/33" is neither.'],
      [['2001:db8::/129'], 'The allowed ips field must hold IPv4 or IPv6 addresses and CIDR ranges: "2001:db8::/129" is neither.'],
      [['10.0.0.1/8/8'], 'The allowed ips field must hold IPv4 or IPv6 addresses and CIDR ranges: "10.0.0.1/8/8" is neither.'],
      ['203.0.113.7', 'The allowed ips field must be a list of addresses.'],
      [[7], 'The allowed ips field must be a list of addresses.'],
    ] as Array<[unknown, string]>) {
      const failure = await expectFailure(await admin('PATCH', `/accounts/${account.id}`, { allowed_ips }), 422);
      expect(failure, JSON.stringify(failure)).toContain(message);
    }
    expect(await expectFailure(await admin('PATCH', '/accounts/999999', { allowed_ips: [] }), 404)).toBe('No account with id 999999.');
    expect(await writes()).toBe(before);
  });

  it('is all or nothing with the other settings: a refused currency change keeps the old list', async () => {
    const account = await createTestAccount(app, '5.00');
    await expectFailure(await admin('PATCH', `/accounts/${account.id}`, { allowed_ips: ['203.0.113.7'], currency: 'EUR' }), 422);
    const token = await tokenFrom('192.0.2.1', account);
    await expectJson(await request('192.0.2.1', token, '/api/get-category'), 200);
    const settings = (await allow(account.id, ['203.0.113.7'])) as Json;
    expect(settings.allowed_ips).toEqual(['203.0.113.7']);
  });
});
