import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, expectJson, ISO_MICROS, type Json } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import type { AccountCredentials } from '../../src/modules/accounts/service.js';
import { licenseGet, validateCode } from './helpers.js';

let app: TestApp;
let owner: AccountCredentials;
beforeAll(async () => {
  app = await startTestApp();
  owner = await createTestAccount(app, '0', 'Author');
});
afterAll(async () => app?.close());

const post = (path: string, body: unknown, token = app.adminToken) =>
  app.request(path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const audioItem = () => ({
  account_id: owner.id,
  name: 'Ambient Loop',
  description: 'Calm pads',
  category: 'Music',
  sub_category: 'Ambient',
  options: ['WAV'],
  version: '1.0.2',
  demo_link: 'https://demo.example.com/ambient',
  tags: ['calm'],
  media_kind: 'audio',
  thumbnail: 'items/ambient.jpg',
  preview_audio: 'items/ambient.mp3',
  price_regular: 12.5,
  price_extended: '60',
});

async function createItemId(): Promise<number> {
  const body = await expectJson(await post('/admin/license/items', audioItem()), 200);
  return body.message.id as number;
}

describe('POST /admin/license/items', () => {
  it('creates an item that the owner then sees through Interface B', async () => {
    const body = await expectJson(await post('/admin/license/items', audioItem()), 200);
    expect(body.status).toBe('success');
    expect(body.message).toMatchObject({ account_id: owner.id, name: 'Ambient Loop', media_kind: 'audio' });
    expect(body.message.published_at).toMatch(ISO_MICROS);
    const item = (await expectJson(await licenseGet(app, `items/item?item_id=${body.message.id}`, owner.apiKey), 200)).item as Json;
    expect(item).toMatchObject({ name: 'Ambient Loop', version: '1.0.2', price: { regular: 12.5, extended: 60 }, currency: 'USD' });
    expect(Object.keys(item.media).sort()).toEqual(['preview_audio', 'thumbnail']);
  });

  it('refuses invalid input with C4 messages and writes nothing', async () => {
    const [before] = await app.services.sql`select count(*)::int as n from license_items`;
    const errors = await expectFailure(
      await post('/admin/license/items', { ...audioItem(), name: '', version: 'v1', preview_audio: undefined, price_regular: -1, media_kind: 'gif' }),
      422,
    );
    expect(errors).toEqual(
      expect.arrayContaining([
        'The name field is required.',
        'The version field must be a dotted version number.',
        'The price regular field must be a non-negative amount with at most 2 decimals.',
        'The media kind field must be one of image, audio, video.',
      ]),
    );
    expect(await expectFailure(await post('/admin/license/items', { ...audioItem(), preview_audio: '' }), 422)).toEqual([
      'The preview audio field is required.',
    ]);
    expect(await expectFailure(await post('/admin/license/items', { ...audioItem(), account_id: 999999 }), 422)).toEqual([
      'The selected account id is invalid.',
    ]);
    const [after] = await app.services.sql`select count(*)::int as n from license_items`;
    expect(after!.n).toBe(before!.n);
  });
});

describe('POST /admin/license/purchases', () => {
  it('generates a code when absent and shows it once; the owner validates it', async () => {
    const itemId = await createItemId();
    const body = await expectJson(await post('/admin/license/purchases', { item_id: itemId }), 200);
    expect(body.message).toMatchObject({ item_id: itemId, license_type: 'Regular', price: 12.5, currency: 'USD', supported_until: null, downloaded: false });
    expect(body.message.purchase_code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const validated = await expectJson(await validateCode(app, { purchase_code: body.message.purchase_code }, { 'X-API-Key': owner.apiKey }), 200);
    expect(validated.data.purchase).not.toHaveProperty('supported_until');
  });

  it('takes a given code, license type, price and support end', async () => {
    const itemId = await createItemId();
    const input = { item_id: itemId, purchase_code: 'GIVEN-CODE-0001', license_type: 'Extended', price: '60.00', supported_until: '2027-01-31T12:00:00Z' };
    const body = await expectJson(await post('/admin/license/purchases', input), 200);
    expect(body.message).toMatchObject({ purchase_code: 'GIVEN-CODE-0001', license_type: 'Extended', price: 60, supported_until: '2027-01-31T12:00:00.000000Z' });
    const validated = await expectJson(await validateCode(app, { purchase_code: 'GIVEN-CODE-0001' }, { 'X-API-Key': owner.apiKey }), 200);
    expect(validated.data.purchase).toMatchObject({ license_type: 'Extended', price: 60, supported_until: '2027-01-31T12:00:00.000000Z' });
    expect(await expectFailure(await post('/admin/license/purchases', input), 422)).toEqual(['The purchase code has already been taken.']);
  });

  it('refuses an unknown item and bad fields', async () => {
    expect(await expectFailure(await post('/admin/license/purchases', { item_id: 999999 }), 422)).toEqual(['The selected item id is invalid.']);
    expect(await expectFailure(await post('/admin/license/purchases', {}), 422)).toEqual(['The item id field is required.']);
    const itemId = await createItemId();
    expect(await expectFailure(await post('/admin/license/purchases', { item_id: itemId, supported_until: 'soon' }), 422)).toEqual([
      'The supported until field must be an ISO 8601 timestamp.',
    ]);
  });
});

describe('POST /admin/accounts/:id/api-key', () => {
  it('rotates the key: the new one works, the old one stops', async () => {
    const account = await createTestAccount(app, '0', 'Rotate');
    const body = await expectJson(await post(`/admin/accounts/${account.id}/api-key`, {}), 200);
    expect(body.message.id).toBe(account.id);
    expect(body.message.apiKey).toMatch(/^ak_/);
    await expectJson(await licenseGet(app, 'account/details', body.message.apiKey), 200);
    await expectJson(await licenseGet(app, 'account/details', account.apiKey), 401);
  });

  it('answers 404 for an unknown account', async () => {
    expect(await expectFailure(await post('/admin/accounts/999999/api-key', {}), 404)).toBe('No account with id 999999.');
    expect(await expectFailure(await post('/admin/accounts/x/api-key', {}), 404)).toBe('No account with id "x".');
  });
});

describe('admin guard', () => {
  it('refuses every license admin endpoint without the admin token', async () => {
    for (const path of ['/admin/license/items', '/admin/license/purchases', `/admin/accounts/${owner.id}/api-key`]) {
      await expectFailure(await post(path, {}, 'wrong-token-wrong-token'), 401);
      await expectFailure(await app.request(path, { method: 'POST' }), 401);
    }
  });
});
