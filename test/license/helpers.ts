import { expect } from 'vitest';
import { expectJson, type Json } from '../helpers/api.js';
import type { TestApp } from '../helpers/harness.js';

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
