/**
 * C27: the player check before a top-up order. The order form's rules (required, select options, an operator's
 * pattern), then the provider of the service's first available route, when its protocol can look players up (the
 * `http` protocol's `POST /players/check`, against a local supplier that speaks it); answers kept 10 minutes per
 * (service, fields); make-order with `check_player: true` refuses what the check calls invalid, before money moves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, buyer, client, expectFailure, expectJson, successMessage, tokenFor, type Json } from '../helpers/api.js';
import { createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startDigiflazzServer, type DigiflazzServer } from '../helpers/suppliers/digiflazz-server.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { watchWrites } from '../helpers/writes.js';
import type { OrderField } from '../../src/db/schema.js';

const SECRET = 'player-check-secret-0123456789';

let app: TestApp;
let supplier: HttpSupplier;
let digiflazz: DigiflazzServer;
let writes: () => Promise<number>;
let shop: Awaited<ReturnType<typeof buyer>>;
const providers: Record<string, number> = {};
const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

const FORM: OrderField[] = [
  { field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text', pattern: '[0-9]{6,12}' },
  { field_value: 'Server', field_name: 'server', field_placeholder: '', field_note: '', field_type: 'select', option: { eu: 'Europe', asia: 'Asia' } },
];

beforeAll(async () => {
  supplier = await startHttpSupplier({ secret: SECRET });
  supplier.players.set('5123456789', 'Sniper_77');
  digiflazz = await startDigiflazzServer();
  app = await startTestApp();
  writes = (await watchWrites(app.services.sql)).count;
  const provider = async (body: Json) => (await successMessage(admin('POST', '/providers', body))).id as number;
  providers.http = await provider({ name: 'Game supplier', kind: 'http', base_url: supplier.url, credentials: { secret: SECRET }, timeout_ms: 400 });
  providers.digiflazz = await provider({ name: 'Digiflazz', kind: 'digiflazz', base_url: digiflazz.url, credentials: digiflazz.credentials });
  shop = await buyer(app, '100.00');
});
afterAll(async () => {
  await app?.close();
  await Promise.all([supplier?.close(), digiflazz?.close()]);
});

/** A top-up with FORM, one 5.00 service routed to `routes` (provider names) in that order. */
async function routedTopUp(routes: string[]) {
  const topUp = await createTopUp(app.services.db, { orderFields: FORM, services: [{ price: '5.00' }] });
  const serviceId = topUp.services[0]!.id;
  await successMessage(admin('PUT', `/top-up-services/${serviceId}/routes`, routes.map((name) => ({ provider_id: providers[name], product_code: `${name}-game-5` }))));
  return { topUpId: topUp.id, serviceId };
}

const check = (body: Json) => shop.api.postJson('/api/top-up/check-player', body);
const balance = async () => (await app.services.sql<{ balance: string }[]>`select balance from accounts where id = ${shop.keys.id}`)[0]!.balance;

describe('the player check', () => {
  it("names the player the service's provider knows, and says why it does not know another; nothing is written", async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const before = await writes();
    expect(await successMessage(check({ topUpId, serviceId, player_id: '5123456789', server: 'eu' }))).toEqual({
      valid: true,
      nickname: 'Sniper_77',
      checked_by: 'provider',
    });
    expect(supplier.playerCheckBodies.at(-1)).toEqual({ productCode: 'http-game-5', fields: { 'Player ID': '5123456789', Server: 'eu' } });
    expect(await successMessage(check({ topUpId, serviceId, player_id: '5000000000', server: 'eu' }))).toEqual({
      valid: false,
      reason: 'No player with this id.',
      checked_by: 'provider',
    });
    expect(await writes()).toBe(before);
  });

  it('keeps an answer 10 minutes per service and fields: the same check again does not ask the provider', async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const asked = supplier.playerChecks;
    await successMessage(check({ topUpId, serviceId, player_id: '5123456789', server: 'eu' }));
    await successMessage(check({ topUpId, serviceId, player_id: '5123456789', server: 'eu' }));
    expect(supplier.playerChecks).toBe(asked + 1);
    // Other fields are another check.
    await successMessage(check({ topUpId, serviceId, player_id: '5123456789', server: 'asia' }));
    expect(supplier.playerChecks).toBe(asked + 2);
    const keys = await app.services.redis.keys(`${app.services.config.BULLMQ_PREFIX}:player-check:*`);
    const ttls = await Promise.all(keys.map((key) => app.services.redis.ttl(key)));
    expect(Math.min(...ttls)).toBeGreaterThan(590);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(600);
  });

  it('checks the order form first, as make-order does, without asking the provider', async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const asked = supplier.playerChecks;
    const before = await writes();
    for (const [body, messages] of [
      [{ topUpId, serviceId }, ['The Player ID field is required.', 'The Server field is required.']],
      [{ topUpId, serviceId, player_id: '12ab', server: 'eu' }, ['The Player ID field format is invalid.']],
      [{ topUpId, serviceId, player_id: '5123456789', server: 'mars' }, ['The selected Server is invalid.']],
      [{ topUpId: 999999, serviceId, player_id: '5123456789', server: 'eu' }, ['The selected top up id is invalid.']],
    ] as Array<[Json, string[]]>) {
      expect(await expectFailure(await check(body), 422)).toEqual(messages);
    }
    expect(supplier.playerChecks).toBe(asked);
    expect(await writes()).toBe(before);
  });

  it('falls back to the form when the provider cannot look players up or does not answer in time', async () => {
    const byDigiflazz = await routedTopUp(['digiflazz', 'http']);
    expect(await successMessage(check({ ...byDigiflazz, player_id: '5000000001', server: 'eu' }))).toEqual({ valid: true, checked_by: 'form' });

    const slow = await routedTopUp(['http']);
    supplier.behaviour.playerCheckDelayMs = 1_500;
    try {
      const started = performance.now();
      expect(await successMessage(check({ ...slow, player_id: '5000000002', server: 'eu' }))).toEqual({ valid: true, checked_by: 'form' });
      // The provider's timeout (400 ms), not its answer, ended the wait.
      expect(performance.now() - started).toBeLessThan(1_400);
    } finally {
      supplier.behaviour.playerCheckDelayMs = 0;
    }
    // A fallback is not kept: the next check asks again, and gets the provider's answer.
    expect(await successMessage(check({ ...slow, player_id: '5000000002', server: 'eu' }))).toMatchObject({ valid: false, checked_by: 'provider' });
  });

  it('asks the first available route: a disabled provider is skipped', async () => {
    const { topUpId, serviceId } = await routedTopUp(['digiflazz', 'http']);
    await successMessage(admin('PATCH', `/providers/${providers.digiflazz}`, { status: 'disabled' }));
    try {
      expect(await successMessage(check({ topUpId, serviceId, player_id: '5123456789', server: 'asia' }))).toMatchObject({ nickname: 'Sniper_77' });
    } finally {
      await successMessage(admin('PATCH', `/providers/${providers.digiflazz}`, { status: 'active' }));
    }
  });
});

describe('test mode (C25)', () => {
  it("a test token's check ends with the order form: no supplier is asked", async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const key = await successMessage(admin('POST', `/accounts/${shop.keys.id}/keys`, { mode: 'test' }));
    const test = client(app, await tokenFor(app, { publicKey: key.public_key, secretKey: key.secret_key }));
    const asked = supplier.playerChecks;
    const body = { topUpId, serviceId, player_id: '5000000009', server: 'eu' };
    expect(await successMessage(test.postJson('/api/top-up/check-player', body))).toEqual({ valid: true, checked_by: 'form' });
    await expectJson(await test.postJson('/api/top-up/make-order', { ...body, check_player: true }), 200);
    expect(supplier.playerChecks).toBe(asked);
  });
});

describe('make-order with check_player', () => {
  it('refuses with 422 what the check calls invalid, before any money moves; places what it calls valid', async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const order = (fields: Json) => shop.api.postJson('/api/top-up/make-order', { topUpId, serviceId, server: 'eu', ...fields });
    const [before, funds] = [await writes(), await balance()];
    expect(await expectFailure(await order({ player_id: '5000000003', check_player: true }), 422)).toEqual([
      'The player check found no player for these fields: No player with this id.',
    ]);
    expect(await writes()).toBe(before);
    expect(await balance()).toBe(funds);
    await expectJson(await order({ player_id: '5123456789', check_player: true }), 200);
    // As a form field too.
    const form = await shop.api.postForm('/api/top-up/make-order', { topUpId: String(topUpId), serviceId: String(serviceId), server: 'eu', player_id: '5000000003', check_player: 'true' });
    expect(await expectFailure(form, 422)).toEqual(['The player check found no player for these fields: No player with this id.']);
  });

  it('without check_player the provider is not asked', async () => {
    const { topUpId, serviceId } = await routedTopUp(['http']);
    const asked = supplier.playerChecks;
    await expectJson(await shop.api.postJson('/api/top-up/make-order', { topUpId, serviceId, server: 'eu', player_id: '5000000004' }), 200);
    expect(supplier.playerChecks).toBe(asked);
    expect(await expectFailure(await shop.api.postJson('/api/top-up/make-order', { topUpId, serviceId, server: 'eu', player_id: '5000000004', check_player: 'maybe' }), 422)).toEqual([
      'The check player field must be true or false.',
    ]);
  });
});

describe('the form pattern', () => {
  it('is set by operators on text fields, shown in the catalog, and refused when it is no regular expression', async () => {
    const category = await successMessage(admin('POST', '/categories', { name: `Games ${Date.now()}`, type: 'top_up' }));
    const form = [{ field_value: 'Player ID', field_name: 'player_id', field_type: 'text', pattern: '[0-9]{6,12}' }];
    const topUp = await successMessage(admin('POST', '/top-ups', { category_id: category.id, name: 'Patterned', slug: `patterned-${Date.now()}`, region: 'EU', order_information: form }));
    expect(Object.values(topUp.order_information as Json)[0]).toMatchObject({ pattern: '[0-9]{6,12}' });
    for (const [field, message] of [
      [{ field_value: 'Player ID', field_name: 'player_id', field_type: 'text', pattern: '[0-9' }, 'must be a valid regular expression.'],
      [{ field_value: 'Server', field_name: 'server', field_type: 'select', option: { eu: 'Europe' }, pattern: 'eu' }, 'is only for text fields.'],
    ] as Array<[Json, string]>) {
      const failure = await expectFailure(await admin('POST', '/top-ups', { category_id: category.id, name: 'Bad', slug: `bad-${Date.now()}`, region: 'EU', order_information: [field] }), 422);
      expect(JSON.stringify(failure)).toContain(message);
    }
  });
});

describe('security', () => {
  it('needs a token', async () => {
    const answer = await app.request('/api/top-up/check-player', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(await expectFailure(answer, 401)).toBe('Unauthenticated.');
  });
});
