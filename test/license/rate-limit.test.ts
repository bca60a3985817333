import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectJson } from '../helpers/api.js';
import { createLicenseItem, createLicensePurchase } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { expectError, validateCode } from './helpers.js';

let app: TestApp;
beforeAll(async () => {
  // Every test request comes from 127.0.0.1: the per-address limit is set high so the per-key limit shows.
  app = await startTestApp({ env: { LICENSE_VALIDATIONS_PER_KEY: '5', LICENSE_VALIDATIONS_PER_IP: '1000' } });
});
afterAll(async () => app?.close());

describe('purchase validation rate limit (C12)', () => {
  it('stops a brute force of codes from one key with 429, also for a valid code, while another key keeps working', async () => {
    const attacker = await createTestAccount(app, '0', 'Attacker');
    const item = await createLicenseItem(app.services.db, attacker.id, 'image');
    const valid = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item });
    const headers = { 'X-API-Key': attacker.apiKey };
    for (let i = 0; i < 5; i++) {
      await expectError(await validateCode(app, { purchase_code: `guess-${i}` }, headers), 404);
    }
    const limited = await validateCode(app, { purchase_code: valid }, headers);
    expect(await expectError(limited, 429)).toBe('Too many validation attempts. Please try again later.');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await expectError(await validateCode(app, { purchase_code: valid }, { ...headers, 'Accept-Language': 'es' }), 429)).toMatch(/^Demasiados intentos/);

    const honest = await createTestAccount(app, '0', 'Honest');
    const own = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: await createLicenseItem(app.services.db, honest.id, 'audio') });
    await expectJson(await validateCode(app, { purchase_code: own }, { 'X-API-Key': honest.apiKey }), 200);
  });

  it('limits per client address across keys', async () => {
    const perIp = await startTestApp({ env: { LICENSE_VALIDATIONS_PER_KEY: '1000', LICENSE_VALIDATIONS_PER_IP: '3' } });
    try {
      const keys = await Promise.all([1, 2, 3, 4].map((n) => createTestAccount(perIp, '0', `Key${n}`)));
      for (const key of keys.slice(0, 3)) await expectError(await validateCode(perIp, { purchase_code: 'guess' }, { 'X-API-Key': key.apiKey }), 404);
      await expectError(await validateCode(perIp, { purchase_code: 'guess' }, { 'X-API-Key': keys[3]!.apiKey }), 429);
    } finally {
      await perIp.close();
    }
  });

  it('does not count reads of items against the validation limit', async () => {
    const reader = await createTestAccount(app, '0', 'Reader');
    await createLicenseItem(app.services.db, reader.id, 'video');
    for (let i = 0; i < 8; i++) await expectJson(await app.request('/license-api/items/all', { headers: { 'X-API-Key': reader.apiKey } }), 200);
  });
});
