import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, expectJson, tokenFor } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { AUTH_FAILURES_PER_KEY: '3', AUTH_FAILURES_PER_IP: '1000' } });
});
afterAll(async () => app?.close());

const exchange = (headers: Record<string, string>) =>
  app.request('/api/generate/authorization-token', { method: 'POST', headers });

describe('token exchange (A1, C3)', () => {
  it('issues an opaque bearer token for a valid key pair, stored only as a digest', async () => {
    const keys = await createTestAccount(app);
    const body = await expectJson(await exchange({ PublicKey: keys.publicKey, SecretKey: keys.secretKey }), 200);
    expect(body.status).toBe('success');
    expect(typeof body.message).toBe('string');
    expect(body.bearer_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const rows = await app.services.sql`select token_hash from auth_tokens where account_id = ${keys.id}`;
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]!.token_hash).toString('utf8')).not.toContain(body.bearer_token);
  });

  it('accepts the token bare and with the Bearer prefix', async () => {
    const token = await tokenFor(app, await createTestAccount(app));
    for (const authorization of [token, `Bearer ${token}`]) {
      const body = await expectJson(await app.request('/api/get-category', { headers: { Authorization: authorization } }), 200);
      expect(body.status).toBe('success');
    }
  });

  it('refuses missing headers with a validation envelope', async () => {
    expect(await expectFailure(await exchange({}), 422)).toEqual([
      'The public key field is required.',
      'The secret key field is required.',
    ]);
  });

  it('refuses a wrong secret and an unknown public key alike', async () => {
    const keys = await createTestAccount(app);
    const wrong = await expectFailure(await exchange({ PublicKey: keys.publicKey, SecretKey: 'sk_wrong' }), 401);
    const unknown = await expectFailure(await exchange({ PublicKey: 'pk_nobody', SecretKey: keys.secretKey }), 401);
    expect(wrong).toBe(unknown);
  });

  it('rate limits failed exchanges per public key, also for the right secret, across requests', async () => {
    const keys = await createTestAccount(app);
    for (let i = 0; i < 3; i++) await expectFailure(await exchange({ PublicKey: keys.publicKey, SecretKey: 'bad' }), 401);
    const limited = await exchange({ PublicKey: keys.publicKey, SecretKey: keys.secretKey });
    expect(await expectFailure(limited, 429)).toMatch(/Too many/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another key is unaffected.
    const other = await createTestAccount(app);
    await expectJson(await exchange({ PublicKey: other.publicKey, SecretKey: other.secretKey }), 200);
  });
});

describe('protected endpoints', () => {
  it('answer 401 with the failed envelope without a token, with a bad token or with key-pair headers', async () => {
    const keys = await createTestAccount(app);
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer not-a-token' },
      { Authorization: '' },
      { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
    ];
    for (const headers of attempts) {
      expect(await expectFailure(await app.request('/api/get-category', { headers }), 401)).toBe('Unauthenticated.');
    }
  });

  it('refuse an expired token', async () => {
    const keys = await createTestAccount(app);
    const token = await tokenFor(app, keys);
    await app.services.sql`update auth_tokens set expires_at = now() - interval '1 second' where account_id = ${keys.id}`;
    await expectFailure(await app.request('/api/get-category', { headers: { Authorization: token } }), 401);
  });
});

describe('per-account request limit (C11)', () => {
  it('is off by default and, when configured, answers 429 past the limit for that account only', async () => {
    const limited = await startTestApp({ env: { ACCOUNT_REQUESTS_PER_MINUTE: '3' } });
    try {
      const [busy, other] = [await createTestAccount(limited), await createTestAccount(limited)];
      const token = await tokenFor(limited, busy);
      const get = (t: string) => limited.request('/api/get-category', { headers: { Authorization: t } });
      for (let i = 0; i < 3; i++) await expectJson(await get(token), 200);
      const refused = await get(token);
      expect(await expectFailure(refused, 429)).toMatch(/Too many/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectJson(await get(await tokenFor(limited, other)), 200);
    } finally {
      await limited.close();
    }
    // The shared app has no limit configured.
    const token = await tokenFor(app, await createTestAccount(app));
    for (let i = 0; i < 5; i++) await expectJson(await app.request('/api/get-category', { headers: { Authorization: token } }), 200);
  });
});

describe('token expiry', () => {
  it('refuses a token once its lifetime has passed, even right after it was accepted', async () => {
    const shortLived = await startTestApp({ env: { TOKEN_TTL_SECONDS: '1' } });
    try {
      const token = await tokenFor(shortLived, await createTestAccount(shortLived));
      await expectJson(await shortLived.request('/api/get-category', { headers: { Authorization: token } }), 200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await expectFailure(await shortLived.request('/api/get-category', { headers: { Authorization: token } }), 401);
    } finally {
      await shortLived.close();
    }
  });
});

describe('failure envelopes (C2)', () => {
  it('answers unknown routes with 404 in the failed envelope', async () => {
    expect(await expectFailure(await app.request('/api/no-such-endpoint'), 404)).toBeTypeOf('string');
    expect(await expectFailure(await app.request('/nowhere'), 404)).toBeTypeOf('string');
  });
});
