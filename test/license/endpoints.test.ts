import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectJson, ISO_MICROS, type Json } from '../helpers/api.js';
import { createLicenseItem, createLicensePurchase } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { accounts } from '../../src/db/schema.js';
import type { AccountCredentials } from '../../src/modules/accounts/service.js';
import { purchaseCodeDigest, type LicenseItem } from '../../src/modules/license/service.js';
import { seedDemoData } from '../../src/seed/index.js';
import { licenseGet, validateCode } from './helpers.js';

let app: TestApp;
let owner: AccountCredentials;
let image: LicenseItem;
let audio: LicenseItem;
let video: LicenseItem;

beforeAll(async () => {
  app = await startTestApp();
  owner = await createTestAccount(app, '1234.50', 'Owner');
  await app.services.db
    .update(accounts)
    .set({
      profileHeading: 'Heading',
      profileDescription: 'About me',
      socialLinks: { twitter: 'https://twitter.com/owner' },
      avatar: 'profiles/avatar.png',
      cover: 'https://cdn.example.com/cover.jpg',
    })
    .where(eq(accounts.id, owner.id));
  image = await createLicenseItem(app.services.db, owner.id, 'image', ['items/s1.jpg', 'items/s2.jpg']);
  audio = await createLicenseItem(app.services.db, owner.id, 'audio');
  video = await createLicenseItem(app.services.db, owner.id, 'video');
});
afterAll(async () => app?.close());

const asset = (path: string) => `${app.baseUrl}/assets/${path}`;

/** Every Item field of spec §2, with the media rules of its kind. */
function expectItem(item: Json, row: LicenseItem) {
  expect(Object.keys(item).sort()).toEqual(
    ['category', 'currency', 'demo_link', 'description', 'id', 'media', 'name', 'options', 'price', 'published_at', 'sub_category', 'tags', 'version'].sort(),
  );
  expect(item).toMatchObject({
    id: row.id,
    name: row.name,
    description: row.description,
    category: 'Templates',
    sub_category: 'Landing',
    options: ['Light', 'Dark'],
    version: '1.2.3',
    demo_link: 'https://demo.example.com/item',
    tags: ['one', 'two'],
    price: { regular: 24.5, extended: 120 },
    currency: 'USD',
  });
  expect(Object.keys(item.price).sort()).toEqual(['extended', 'regular']);
  expect(item.published_at).toMatch(ISO_MICROS);
}

describe('GET account/details (B1)', () => {
  it('returns the key owner with every Account field', async () => {
    const body = await expectJson(await licenseGet(app, 'account/details', owner.apiKey), 200);
    expect(Object.keys(body).sort()).toEqual(['data', 'status']);
    expect(body.status).toBe('success');
    const data = body.data;
    expect(Object.keys(data).sort()).toEqual(['balance', 'currency', 'email', 'name', 'profile', 'registered_at', 'username']);
    expect(data.name).toEqual({ firstname: 'Owner', lastname: 'Account', full_name: 'Owner Account' });
    expect(data.username).toMatch(/^user_/);
    expect(data.email).toMatch(/^owner-.*@example\.com$/);
    expect(data.balance).toBe(1234.5);
    expect(data.currency).toBe('USD');
    expect(data.profile).toEqual({
      heading: 'Heading',
      description: 'About me',
      contact: { email: data.email },
      social_links: { twitter: 'https://twitter.com/owner' },
      media: { avatar: asset('profiles/avatar.png'), cover: 'https://cdn.example.com/cover.jpg' },
    });
    expect(data.registered_at).toMatch(ISO_MICROS);
  });
});

describe('GET items/all and items/item (B2, B3)', () => {
  it("lists the owner's items with every Item field", async () => {
    const body = await expectJson(await licenseGet(app, 'items/all', owner.apiKey), 200);
    expect(Object.keys(body).sort()).toEqual(['items', 'status']);
    expect(body.status).toBe('success');
    expect(body.items.map((i: Json) => i.id)).toEqual([image.id, audio.id, video.id]);
    body.items.forEach((item: Json, i: number) => expectItem(item, [image, audio, video][i]!));
  });

  it('returns one item in `item`', async () => {
    const body = await expectJson(await licenseGet(app, `items/item?item_id=${video.id}`, owner.apiKey), 200);
    expect(Object.keys(body).sort()).toEqual(['item', 'status']);
    expectItem(body.item, video);
  });

  it('shows media by kind, as absolute URLs', async () => {
    const media = async (id: number) => (await expectJson(await licenseGet(app, `items/item?item_id=${id}`, owner.apiKey), 200)).item.media;
    expect(await media(image.id)).toEqual({
      thumbnail: asset('items/thumb.jpg'),
      preview_image: asset('items/preview.jpg'),
      screenshots: [asset('items/s1.jpg'), asset('items/s2.jpg')],
    });
    expect(await media(audio.id)).toEqual({ thumbnail: asset('items/thumb.jpg'), preview_audio: asset('items/preview.mp3') });
    expect(await media(video.id)).toEqual({
      thumbnail: asset('items/thumb.jpg'),
      preview_image: asset('items/preview.jpg'),
      preview_video: asset('items/preview.mp4'),
    });
  });
});

describe('POST purchases/validation (B4)', () => {
  it('validates a code of an own item with every Purchase field', async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: image, supportedUntil: '2027-05-01T00:00:00Z', downloaded: true, price: '30.10' });
    const body = await expectJson(await validateCode(app, { purchase_code: code }, { 'X-API-Key': owner.apiKey }), 200);
    expect(Object.keys(body).sort()).toEqual(['data', 'status']);
    expect(body.status).toBe('success');
    expect(Object.keys(body.data)).toEqual(['purchase']);
    const purchase = body.data.purchase;
    expect(Object.keys(purchase).sort()).toEqual(
      ['currency', 'date', 'downloaded', 'item', 'license_type', 'price', 'purchase_code', 'supported_until'].sort(),
    );
    expect(purchase).toMatchObject({
      purchase_code: code,
      license_type: 'Regular',
      price: 30.1,
      currency: 'USD',
      supported_until: '2027-05-01T00:00:00.000000Z',
      downloaded: true,
    });
    expect(purchase.date).toMatch(ISO_MICROS);
    expectItem(purchase.item, image);
  });

  it('omits supported_until when support is disabled', async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: audio, supportedUntil: null });
    const body = await expectJson(await validateCode(app, { purchase_code: code }, { 'X-API-Key': owner.apiKey }), 200);
    expect(body.data.purchase).not.toHaveProperty('supported_until');
    expect(body.data.purchase.downloaded).toBe(false);
    expect(body.data.purchase.price).toBe(24.5);
  });

  it('stores only the keyed digest of the code', async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: video });
    const rows = await app.services.sql`select encode(code_hash, 'hex') as hash from license_purchases where item_id = ${video.id}`;
    expect(rows.map((r) => r.hash)).toEqual([purchaseCodeDigest(app.services.config.codeEncryptionKey, code).toString('hex')]);
  });

  it('accepts the code as a form field and as a query parameter', async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: video });
    const form = await app.request('/license-api/purchases/validation', {
      method: 'POST',
      headers: { 'X-API-Key': owner.apiKey },
      body: new URLSearchParams({ purchase_code: code }),
    });
    expect((await expectJson(form, 200)).data.purchase.purchase_code).toBe(code);
    const query = await app.request(`/license-api/purchases/validation?purchase_code=${code}`, { method: 'POST', headers: { 'X-API-Key': owner.apiKey } });
    expect((await expectJson(query, 200)).data.purchase.item.id).toBe(video.id);
  });
});

describe('api key placement (C12)', () => {
  it('accepts the key in the query, X-API-Key, Authorization: Bearer, a JSON body and a form body', async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: image });
    const attempts: Array<[string, RequestInit]> = [
      [`/license-api/account/details?api_key=${owner.apiKey}`, {}],
      ['/license-api/account/details', { headers: { 'X-API-Key': owner.apiKey } }],
      ['/license-api/account/details', { headers: { Authorization: `Bearer ${owner.apiKey}` } }],
      [
        '/license-api/purchases/validation',
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ api_key: owner.apiKey, purchase_code: code }) },
      ],
      ['/license-api/purchases/validation', { method: 'POST', body: new URLSearchParams({ api_key: owner.apiKey, purchase_code: code }) }],
      [`/license-api/purchases/validation?api_key=${owner.apiKey}&purchase_code=${code}`, { method: 'POST' }],
    ];
    for (const [path, init] of attempts) {
      const body = await expectJson(await app.request(path, init), 200);
      expect(body.status, path).toBe('success');
    }
    // Another scheme's Authorization (a proxy's Basic credentials) is not a key: the query's key is read.
    const behindProxy = await app.request(`/license-api/account/details?api_key=${owner.apiKey}`, { headers: { Authorization: 'Basic dXNlcjpwdw==' } });
    expect((await expectJson(behindProxy, 200)).status).toBe('success');
  });
});

describe('demo data (C14)', () => {
  it('seeds items of each kind and a valid purchase code with support, for the demo api key', async () => {
    const demo = await seedDemoData(app.services.db, app.services.config);
    const items = (await expectJson(await licenseGet(app, 'items/all', demo.apiKey), 200)).items as Json[];
    expect(items.map((i) => Object.keys(i.media).sort())).toEqual([
      ['preview_image', 'screenshots', 'thumbnail'],
      ['preview_audio', 'thumbnail'],
      ['preview_image', 'preview_video', 'thumbnail'],
    ]);
    const body = await expectJson(await validateCode(app, { purchase_code: demo.purchaseCode }, { 'X-API-Key': demo.apiKey }), 200);
    expect(body.data.purchase.item.id).toBe(items[0]!.id);
    expect(body.data.purchase.supported_until).toMatch(ISO_MICROS);
    const [unsupported] = await app.services.sql`
      select count(*)::int as n from license_purchases p join license_items i on i.id = p.item_id
      where i.account_id = (select id from accounts where username = 'demo') and p.supported_until is null`;
    expect(unsupported!.n).toBe(1);
  });
});

describe('reference', () => {
  it('documents the four endpoints in the OpenAPI document', async () => {
    const doc = await expectJson(await app.request('/openapi.json'), 200);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/license-api/account/details', '/license-api/items/all', '/license-api/items/item', '/license-api/purchases/validation']),
    );
    expect(doc.paths['/license-api/purchases/validation'].post.security).toEqual([{ apiKey: [] }]);
  });
});
