import { expect } from 'vitest';
import { expectJson, type Json } from '../helpers/api.js';
import type { TestApp } from '../helpers/harness.js';
import type { MediaKind } from '../../src/db/schema.js';
import { createItem, createPurchase, type LicenseItem, type NewPurchase } from '../../src/modules/license/service.js';

const PREVIEWS: Record<MediaKind, Partial<Record<'previewImage' | 'previewVideo' | 'previewAudio', string>>> = {
  image: { previewImage: 'items/preview.jpg' },
  audio: { previewAudio: 'items/preview.mp3' },
  video: { previewImage: 'items/preview.jpg', previewVideo: 'items/preview.mp4' },
};

/** An item of `kind` owned by `accountId`; every preview column is filled so the response rules are what hide them. */
export async function makeItem(app: TestApp, accountId: number, kind: MediaKind, screenshots: string[] = []): Promise<LicenseItem> {
  return createItem(app.services.db, {
    accountId,
    name: `${kind} item`,
    description: `A ${kind} item`,
    category: 'Templates',
    subCategory: 'Landing',
    options: ['Light', 'Dark'],
    version: '1.2.3',
    demoLink: 'https://demo.example.com/item',
    tags: ['one', 'two'],
    mediaKind: kind,
    thumbnail: 'items/thumb.jpg',
    previewImage: 'items/preview.jpg',
    previewVideo: 'items/preview.mp4',
    previewAudio: 'items/preview.mp3',
    ...PREVIEWS[kind],
    screenshots,
    priceRegular: '24.50',
    priceExtended: '120.00',
    currency: 'USD',
  });
}

export async function makePurchase(app: TestApp, input: NewPurchase): Promise<string> {
  const created = await createPurchase(app.services.db, app.services.config.codeEncryptionKey, input);
  return created!.purchaseCode;
}

/** Asserts the Interface B failure envelope and returns `msg`. */
export async function expectError(response: Response, status: number): Promise<string> {
  const body: Json = await expectJson(response, status);
  // Server-side failures also carry the request id of their log line.
  expect(Object.keys(body).sort()).toEqual(status >= 500 ? ['msg', 'request_id', 'status'] : ['msg', 'status']);
  expect(body.status).toBe('error');
  expect(typeof body.msg).toBe('string');
  return body.msg as string;
}

export const licenseGet = (app: TestApp, path: string, apiKey?: string, headers: Record<string, string> = {}) =>
  app.request(`/license-api/${path}`, { headers: { ...(apiKey ? { 'X-API-Key': apiKey } : {}), ...headers } });

export const validateCode = (app: TestApp, body: Json, headers: Record<string, string> = {}) =>
  app.request('/license-api/purchases/validation', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
