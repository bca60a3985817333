import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectJson } from '../helpers/api.js';
import { createLicenseItem, createLicensePurchase } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { rotateApiKey, type AccountCredentials } from '../../src/modules/accounts/service.js';
import type { LicenseItem } from '../../src/modules/license/service.js';
import { expectError, licenseGet, validateCode } from './helpers.js';

let app: TestApp;
let owner: AccountCredentials;
let other: AccountCredentials;
let ownItem: LicenseItem;
let otherItem: LicenseItem;

beforeAll(async () => {
  app = await startTestApp();
  owner = await createTestAccount(app, '0', 'Owner');
  other = await createTestAccount(app, '0', 'Other');
  ownItem = await createLicenseItem(app.services.db, owner.id, 'image');
  otherItem = await createLicenseItem(app.services.db, other.id, 'video');
});
afterAll(async () => app?.close());

const ES = { 'Accept-Language': 'es-ES,es;q=0.9,en;q=0.8' };
const EN = { 'Accept-Language': 'en-US,en;q=0.9' };

describe('api key failures (401)', () => {
  it('refuses a missing key on every endpoint, in English or Spanish', async () => {
    for (const path of ['account/details', 'items/all', `items/item?item_id=${ownItem.id}`]) {
      expect(await expectError(await licenseGet(app, path, undefined, EN), 401)).toBe('Invalid request: the api_key parameter is required.');
      expect(await expectError(await licenseGet(app, path, undefined, ES), 401)).toBe('Solicitud no válida: el parámetro api_key es obligatorio.');
    }
    expect(await expectError(await validateCode(app, { purchase_code: 'x' }, ES), 401)).toMatch(/^Solicitud no válida/);
  });

  it('refuses an unknown key in every placement', async () => {
    const attempts: Array<[string, RequestInit]> = [
      ['/license-api/account/details?api_key=ak_unknown', {}],
      ['/license-api/account/details', { headers: { 'X-API-Key': 'ak_unknown' } }],
      ['/license-api/account/details', { headers: { Authorization: 'Bearer ak_unknown' } }],
      ['/license-api/purchases/validation', { method: 'POST', body: new URLSearchParams({ api_key: 'ak_unknown', purchase_code: 'x' }) }],
    ];
    for (const [path, init] of attempts) {
      expect(await expectError(await app.request(path, init), 401), path).toBe('Invalid request: the API key is not valid.');
    }
    expect(await expectError(await licenseGet(app, 'items/all', 'ak_unknown', ES), 401)).toBe('Solicitud no válida: la clave de API no es válida.');
  });

  it('does not accept a bearer token of Interface A as an api key', async () => {
    expect(await expectError(await licenseGet(app, 'account/details', undefined, { Authorization: `Bearer ${owner.secretKey}` }), 401)).toMatch(/not valid/);
  });
});

describe('resource failures', () => {
  it('answers no items found (404) for an owner without items', async () => {
    const empty = await createTestAccount(app, '0', 'Empty');
    expect(await expectError(await licenseGet(app, 'items/all', empty.apiKey), 404)).toBe('No items found.');
    expect(await expectError(await licenseGet(app, 'items/all', empty.apiKey, ES), 404)).toBe('No se encontraron artículos.');
  });

  it('answers 422 for a missing or malformed item_id', async () => {
    for (const query of ['', '?item_id=', '?item_id=abc', '?item_id=0', '?item_id=-3', '?item_id=1.5']) {
      expect(await expectError(await licenseGet(app, `items/item${query}`, owner.apiKey), 422), query).toMatch(/^Invalid request: item_id/);
    }
    expect(await expectError(await licenseGet(app, 'items/item', owner.apiKey, ES), 422)).toMatch(/^Solicitud no válida: item_id/);
  });

  it('answers item not found (404) for an unknown id', async () => {
    expect(await expectError(await licenseGet(app, 'items/item?item_id=999999', owner.apiKey), 404)).toBe('Item not found.');
    expect(await expectError(await licenseGet(app, 'items/item?item_id=999999', owner.apiKey, ES), 404)).toBe('Artículo no encontrado.');
  });

  it('answers invalid purchase code (404) for an unknown code', async () => {
    const headers = { 'X-API-Key': owner.apiKey };
    expect(await expectError(await validateCode(app, { purchase_code: 'no-such-code' }, headers), 404)).toBe('Invalid purchase code.');
    expect(await expectError(await validateCode(app, { purchase_code: 'no-such-code' }, { ...headers, ...ES }), 404)).toBe('Código de compra no válido.');
  });

  it('answers 422 for a missing purchase code', async () => {
    const headers = { 'X-API-Key': owner.apiKey };
    for (const body of [{}, { purchase_code: '' }, { purchase_code: 42 }]) {
      expect(await expectError(await validateCode(app, body, headers), 422)).toBe('Invalid request: the purchase_code parameter is required.');
    }
    expect(await expectError(await validateCode(app, {}, { ...headers, ...ES }), 422)).toMatch(/purchase_code es obligatorio/);
  });

  it('answers 400 for a malformed body, localized', async () => {
    const send = (headers: Record<string, string>, body: string) =>
      app.request('/license-api/purchases/validation', { method: 'POST', headers: { 'X-API-Key': owner.apiKey, ...headers }, body });
    expect(await expectError(await send({ 'Content-Type': 'application/json' }, '{"purchase_code":'), 400)).toMatch(/could not be read/);
    expect(await expectError(await send({ 'Content-Type': 'application/json', ...ES }, '[1]'), 400)).toMatch(/No se pudo leer/);
    expect(await expectError(await send({ 'Content-Type': 'text/xml' }, '<a/>'), 400)).toMatch(/could not be read/);
  });

  it('answers unknown routes with 404 and wrong methods with 405 and Allow, in the B envelope, localized', async () => {
    expect(await expectError(await app.request('/license-api/no-such-thing'), 404)).toBe('The requested endpoint does not exist.');
    expect(await expectError(await app.request('/license-api/no-such-thing', { method: 'POST', headers: ES }), 404)).toBe('El recurso solicitado no existe.');
    const wrong = await app.request('/license-api/items/all', { method: 'POST', headers: ES });
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect(await expectError(wrong, 405)).toBe('Este método no está permitido aquí: la cabecera Allow indica los permitidos.');
    expect(await expectError(await app.request('/license-api/purchases/validation', { headers: { 'X-API-Key': owner.apiKey } }), 405)).toMatch(/Allow header/);
  });
});

describe('isolation between accounts (C12)', () => {
  it("hides another owner's items", async () => {
    expect(await expectError(await licenseGet(app, `items/item?item_id=${otherItem.id}`, owner.apiKey), 404)).toBe('Item not found.');
    const mine = await expectJson(await licenseGet(app, 'items/all', owner.apiKey), 200);
    expect(mine.items.map((i: { id: number }) => i.id)).toEqual([ownItem.id]);
  });

  it("treats a code of another owner's item as invalid, exactly like an unknown code", async () => {
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item: otherItem });
    const foreign = await validateCode(app, { purchase_code: code }, { 'X-API-Key': owner.apiKey });
    expect(await expectError(foreign, 404)).toBe('Invalid purchase code.');
    // The rightful owner validates it.
    await expectJson(await validateCode(app, { purchase_code: code }, { 'X-API-Key': other.apiKey }), 200);
  });

  it('stops accepting a rotated key at once', async () => {
    const account = await createTestAccount(app, '0', 'Rotating');
    const fresh = await rotateApiKey(app.services.db, account.id);
    expect(await expectError(await licenseGet(app, 'account/details', account.apiKey), 401)).toMatch(/not valid/);
    await expectJson(await licenseGet(app, 'account/details', fresh!), 200);
  });
});

describe('unexpected failures', () => {
  it('answer 500 in the B envelope with a localized generic message', async () => {
    const broken = await startTestApp();
    try {
      const account = await createTestAccount(broken, '0', 'Broken');
      await broken.services.sql`alter table license_items rename to license_items_gone`;
      const en = await expectError(await licenseGet(broken, 'items/all', account.apiKey), 500);
      expect(en).toBe('Something went wrong. Please try again later.');
      expect(await expectError(await licenseGet(broken, 'items/all', account.apiKey, ES), 500)).toBe('Algo salió mal. Inténtelo de nuevo más tarde.');
    } finally {
      await broken.close();
    }
  });
});
