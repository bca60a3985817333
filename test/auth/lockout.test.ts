import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, expectJson } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

/**
 * C3: failed token requests are limited per (public key, client address), and per client address for public keys
 * that do not exist, so a stranger failing with someone's public key cannot lock its owner out, and one client failing
 * with real keys cannot lock out the other accounts behind its address. Client addresses come from
 * X-Forwarded-For here (TRUST_PROXY=true), as behind a load balancer.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { TRUST_PROXY: 'true', AUTH_FAILURES_PER_KEY: '10', AUTH_FAILURES_PER_IP: '50' } });
});
afterAll(async () => app?.close());

const exchange = (from: string, publicKey: string, secretKey: string) =>
  app.request('/api/generate/authorization-token', {
    method: 'POST',
    headers: { PublicKey: publicKey, SecretKey: secretKey, 'X-Forwarded-For': from },
  });

describe('failed token exchanges (C3)', () => {
  it("a stranger's failures with the owner's public key do not lock the owner out", async () => {
    const owner = await createTestAccount(app);
    for (let i = 0; i < 12; i++) await exchange('203.0.113.7', owner.publicKey, 'sk_wrong');
    // The stranger's address is refused, even with the right secret.
    expect(await expectFailure(await exchange('203.0.113.7', owner.publicKey, owner.secretKey), 429)).toMatch(/Too many/);
    // The owner, from its own address, is not.
    await expectJson(await exchange('198.51.100.20', owner.publicKey, owner.secretKey), 200);
  });

  it('an address that used up its failures is refused for every account, other addresses are not', async () => {
    const victim = await createTestAccount(app);
    for (let i = 0; i < 50; i++) await exchange('203.0.113.50', `pk_guess_${i}`, 'sk_wrong');
    expect(await expectFailure(await exchange('203.0.113.50', victim.publicKey, victim.secretKey), 429)).toMatch(/Too many/);
    await expectJson(await exchange('198.51.100.21', victim.publicKey, victim.secretKey), 200);
  });

  it('failures with existing keys from an address never refuse another account there: only unknown keys count per address', async () => {
    const others = await Promise.all(Array.from({ length: 6 }, () => createTestAccount(app)));
    // 60 wrong secrets from one address, 10 for each of six real public keys: past AUTH_FAILURES_PER_IP (50).
    for (const other of others) for (let i = 0; i < 10; i++) await exchange('203.0.113.70', other.publicKey, 'sk_wrong');
    // Each of those keys is refused from there, but a correct pair of any other account there is not.
    expect(await expectFailure(await exchange('203.0.113.70', others[0]!.publicKey, others[0]!.secretKey), 429)).toMatch(/Too many/);
    const neighbour = await createTestAccount(app);
    await expectJson(await exchange('203.0.113.70', neighbour.publicKey, neighbour.secretKey), 200);
  });

  it('the address is the one the load balancer appended: a client cannot pick a fresh one by sending X-Forwarded-For', async () => {
    const victim = await createTestAccount(app);
    // A balancer appends the address it saw to whatever the client sent: only that last entry is the client's.
    for (let i = 0; i < 50; i++) await exchange(`10.9.${i}.1, 203.0.113.60`, `pk_guess_${i}`, 'sk_wrong');
    expect(await expectFailure(await exchange('10.9.99.1, 203.0.113.60', victim.publicKey, victim.secretKey), 429)).toMatch(/Too many/);
    await expectJson(await exchange('203.0.113.60, 198.51.100.22', victim.publicKey, victim.secretKey), 200);
  });

  it('limiter keys in Redis hold digests, never a header value', async () => {
    const owner = await createTestAccount(app);
    // A secret pasted into the wrong header, and a forwarded address: neither may appear in a Redis key.
    await expectFailure(await exchange('192.0.2.99', owner.secretKey, owner.secretKey), 401);
    const keys = await app.services.redis.keys(`${app.services.config.BULLMQ_PREFIX}:*`);
    expect(keys.some((key) => key.includes('auth-failures'))).toBe(true);
    for (const key of keys) {
      expect(key).not.toContain(owner.secretKey.slice(3, 20));
      expect(key).not.toContain('192.0.2.99');
    }
  });
});
