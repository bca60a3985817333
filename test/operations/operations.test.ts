import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../helpers/api.js';
import { routeDefinitions } from '../helpers/contract.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createApp } from '../../src/app.js';

/** C16: the operational endpoints, without a token. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('operational endpoints (C16)', () => {
  it('/health says the process is up; /ready that PostgreSQL and Redis answer', async () => {
    expect(await expectJson(await app.request('/health'), 200)).toEqual({ status: 'ok' });
    expect(await expectJson(await app.request('/ready'), 200)).toEqual({ status: 'ready', postgres: 'up', redis: 'up' });
  });

  it('/openapi.json documents every route with its request and response schemas, failures and security', async () => {
    const doc = await expectJson(await app.request('/openapi.json'), 200);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: app.baseUrl, description: 'This server' }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'bearerToken', 'metricsToken', 'webhookSignature']);
    const routes = routeDefinitions(createApp(app.services));
    expect(routes.length).toBeGreaterThanOrEqual(21 + 2 + 10 + 2);
    for (const route of routes) {
      const operation = doc.paths[route.path][route.method];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
      // JSON everywhere but /metrics (Prometheus text).
      const [success] = Object.values(operation.responses['200'].content) as Array<{ schema?: unknown }>;
      expect(success?.schema, `${route.method} ${route.path}`).toBeDefined();
      expect(Array.isArray(operation.security)).toBe(true);
    }
    // The token endpoint declares its headers, so the interactive reference can obtain a token.
    const token = doc.paths['/api/generate/authorization-token'].post;
    expect(token.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual(['header:PublicKey', 'header:SecretKey']);
    // The alternate spellings, the Idempotency-Key header and text/plain imports are part of the contract.
    const cardOrder = doc.paths['/api/card/make-order'].post;
    expect(cardOrder.parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    expect(JSON.stringify(cardOrder.requestBody)).toContain('serviceIds');
    // A body whose empty form is refused is required (so generated clients must send one); one of optional fields is not.
    expect(cardOrder.requestBody.required).toBe(true);
    expect(doc.paths['/admin/accounts/{id}'].patch.requestBody.required).toBeUndefined();
    expect(doc.paths['/admin/accounts/{id}/keys'].post.requestBody.required).toBe(true);
    expect(Object.keys(doc.paths['/admin/card-services/{id}/codes'].post.requestBody.content)).toContain('text/plain');
    expect(doc.paths['/admin/accounts/{id}/balance'].post.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:id']);
    // C17's events, as the store POSTs them to an endpoint, with the signature that secures them.
    expect(Object.keys(doc.webhooks)).toEqual(['order.completed', 'order.stock_short', 'order.refunded', 'webhook.test']);
    expect(doc.webhooks['order.refunded'].post).toMatchObject({
      security: [{ webhookSignature: [] }],
      requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderEvent' } } } },
    });
  });
});
