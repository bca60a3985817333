import { createStoreClient, type StoreClient } from '@topup-store/client';
import { expect } from 'vitest';
import { createAccount, type AccountCredentials } from '../../src/modules/accounts/service.js';
import { createOrderFor } from './fixtures.js';
import type { TestApp } from './harness.js';

export type Json = Record<string, any>;

/** Reads a response as JSON, checking the status first so failures show the body. */
export async function expectJson(response: Response, status: number): Promise<Json> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type') ?? '').toContain('application/json');
  return JSON.parse(text) as Json;
}

/** The `message` of a 200 answer (the success envelope's content), checking the status first. */
export const successMessage = async (response: Promise<Response>): Promise<Json> => (await expectJson(await response, 200)).message;

/** Asserts the Interface A failure envelope and returns its `errors`. */
export async function expectFailure(response: Response, status: number): Promise<string | string[]> {
  const body = await expectJson(response, status);
  expect(body.status).toBe('failed');
  expect(Object.keys(body).sort()).toEqual(status === 500 || status === 503 ? ['errors', 'request_id', 'status'] : ['errors', 'status']);
  return body.errors as string | string[];
}

/** The admin API as an operator's script calls it: `admin(app)('PUT', '/top-up-services/1/routes', body)`, JSON in. */
export const adminOf =
  (app: TestApp) =>
  (method: string, path: string, body?: unknown): Promise<Response> =>
    app.request(`/admin${path}`, {
      method,
      headers: { Authorization: `Bearer ${app.adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

export async function createTestAccount(app: TestApp, balance = '1000.00', name = 'Test'): Promise<AccountCredentials> {
  const { config, db } = app.services;
  return createAccount(db, {
    firstname: name,
    lastname: 'Account',
    email: `${name.toLowerCase()}-${Math.random().toString(36).slice(2)}@example.com`,
    currency: config.STORE_CURRENCY,
    currencySymbol: config.STORE_CURRENCY_SYMBOL,
    balance,
  });
}

export async function tokenFor(app: TestApp, keys: Pick<AccountCredentials, 'publicKey' | 'secretKey'>): Promise<string> {
  const response = await app.request('/api/generate/authorization-token', {
    method: 'POST',
    headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
  });
  const body = await expectJson(response, 200);
  return body.bearer_token as string;
}

/** A client bound to one bearer token. */
export function client(app: TestApp, token: string) {
  const headers = { Authorization: `Bearer ${token}` };
  return {
    get: (path: string) => app.request(path, { headers }),
    delete: (path: string) => app.request(path, { method: 'DELETE', headers }),
    postJson: (path: string, body: unknown, extra: Record<string, string> = {}) =>
      app.request(path, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', ...extra }, body: JSON.stringify(body) }),
    postForm: (path: string, fields: Record<string, string | string[]>, extra: Record<string, string> = {}) => {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) form.append(k, item);
      return app.request(path, { method: 'POST', headers: { ...headers, ...extra }, body: form });
    },
  };
}

/** The TypeScript client (clients/typescript) of a key pair, as a reseller's code holds it. */
export const storeClientFor = (app: TestApp, keys: Pick<AccountCredentials, 'publicKey' | 'secretKey'>): StoreClient =>
  createStoreClient({ baseUrl: app.baseUrl, publicKey: keys.publicKey, secretKey: keys.secretKey });

/**
 * A new account (with `balance`), as a reseller's code calls the store (`store`: the TypeScript client) and as raw
 * HTTP with one bearer token (`api`), for the tests of envelopes, headers and bodies the client never sends.
 */
export async function buyer(app: TestApp, balance = '1000.00') {
  const keys = await createTestAccount(app, balance);
  return { keys, api: client(app, await tokenFor(app, keys)), store: storeClientFor(app, keys) };
}

/** What a customer has already ordered: a product, and the order's status (completed unless given). */
export type PastOrder = Parameters<typeof createOrderFor>[2];

/** A fresh account (balance 0) signed in, having already ordered `orders`: for review rules and lists. */
export async function customer(app: TestApp, orders: PastOrder[] = [], name = 'Test') {
  const keys = await createTestAccount(app, '0', name);
  for (const o of orders) await createOrderFor(app.services.db, keys.id, { status: 1, ...o });
  const token = await tokenFor(app, keys);
  return { id: keys.id, token, api: client(app, token) };
}

export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A chunked body: the lines from `next` (until it returns null), sent as they are made. */
export const chunkedBody = (next: () => string | null) =>
  new ReadableStream<Uint8Array>({
    pull(controller) {
      const text = next();
      if (text === null) controller.close();
      else controller.enqueue(new TextEncoder().encode(text));
    },
  });
