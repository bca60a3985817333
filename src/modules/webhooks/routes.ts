import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { adminOnly } from '../../http/admin-guard.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { pageObject, pageSchema } from '../../http/pagination.js';
import { idParam } from '../../http/validation.js';
import { pageRequest } from '../../lib/paging.js';
import { existingAccount } from '../accounts/service.js';
import { signedIn } from '../auth/middleware.js';
import { listDeliveries, retryDelivery } from './deliveries.js';
import { CLIENT_EVENTS, deleteEndpoint, enableEndpoint, listEndpoints, liveEndpointsOf, registerEndpoint, sendTestEvent, type EndpointDeps } from './endpoints.js';
import { presentEndpoint } from './presenters.js';
import {
  ListDeliveriesQuery,
  NewWebhookEndpoint,
  OrderEvent,
  RegisterEndpointBody,
  TestEvent,
  TestEventQueued,
  WebhookDelivery,
  WebhookEndpoint,
} from './schemas.js';

const endpointDeps = (c: Context<AppEnv>): EndpointDeps => {
  const { db, config } = c.get('services');
  return { db, codeKey: config.codeEncryptionKey, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE };
};

/**
 * C17's events in the document's `webhooks` (OpenAPI 3.1): what the store POSTs to an endpoint, so clients' code
 * generators type them. Registered on the app itself, as a mounted router would prefix their names with its path.
 */
export function documentWebhookEvents(app: OpenAPIHono<AppEnv>) {
  const signed = 'Signed as the Standard Webhooks specification says: headers `webhook-id`, `webhook-timestamp` and `webhook-signature` (C17).';
  const received = { 200: { description: 'Any 2xx within 10 s: delivered. Anything else is retried for about a day.' } };
  app.openAPIRegistry.registerComponent('securitySchemes', 'webhookSignature', {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description: '`v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body">` with the secret the endpoint was registered with',
  });
  for (const type of [...CLIENT_EVENTS, 'webhook.test'] as const) {
    const schema = type === 'webhook.test' ? TestEvent : OrderEvent;
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook${type.split(/[._]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}`,
      security: [{ webhookSignature: [] }],
      summary: type === 'webhook.test' ? 'Sent by POST /api/webhooks/{id}/test' : `An order moved (${type})`,
      description: signed,
      request: { body: { content: { 'application/json': { schema } } } },
      responses: received,
    });
  }
}

/** C17 for clients: their own endpoints. Another account's endpoint is a 404, as an unknown one. */
export function webhookRoutes() {
  const router = contractRouter();
  const common = { tag: 'Webhooks', guard: signedIn };

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/webhooks', summary: 'Register an endpoint (its secret is shown this once)', jsonBody: RegisterEndpointBody, ok: NewWebhookEndpoint, errors: [409] }),
    async (c) => {
      const { secret, ...created } = await registerEndpoint(endpointDeps(c), c.get('account'), c.req.valid('json'));
      return c.json({ status: 'success' as const, message: { ...presentEndpoint(created), secret } }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/webhooks', summary: 'Your endpoints', ok: z.array(WebhookEndpoint) }),
    async (c) => {
      const endpoints = await listEndpoints(c.get('services').db, c.get('account'));
      return c.json({ status: 'success' as const, message: endpoints.map(presentEndpoint) }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'delete', path: '/webhooks/:id', summary: 'Delete an endpoint', params: idParam('webhook endpoint'), ok: z.string(), errors: [404] }),
    async (c) => {
      await deleteEndpoint(c.get('services').db, c.get('account'), c.req.valid('param').id);
      return c.json({ status: 'success' as const, message: 'Webhook endpoint deleted.' }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/webhooks/:id/test', summary: 'Send a webhook.test event to an endpoint', params: idParam('webhook endpoint'), ok: TestEventQueued, errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await sendTestEvent(c.get('services').db, c.get('account'), c.req.valid('param').id) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/webhooks/:id/enable', summary: 'Re-enable an endpoint disabled after 5 days of failures', params: idParam('webhook endpoint'), ok: WebhookEndpoint, errors: [404] }),
    async (c) => {
      const enabled = await enableEndpoint(c.get('services').db, c.get('account'), c.req.valid('param').id);
      return c.json({ status: 'success' as const, message: presentEndpoint(enabled) }, 200);
    },
  );

  return router;
}

/** C17 for operators: endpoints of any account, every account's deliveries, and a resend. Mounted under /admin (behind its guard). */
export function webhookAdminRoutes() {
  const router = contractRouter();
  const common = { tag: 'Admin', guard: adminOnly };

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/accounts/:id/webhooks', summary: "Register an endpoint for an account (its secret is shown this once)", params: idParam('account'), jsonBody: RegisterEndpointBody, ok: NewWebhookEndpoint, errors: [404, 409] }),
    async (c) => {
      const accountId = await existingAccount(c.get('services').db, c.req.valid('param').id);
      const { secret, ...created } = await registerEndpoint(endpointDeps(c), liveEndpointsOf(accountId), c.req.valid('json'));
      return c.json({ status: 'success' as const, message: { ...presentEndpoint(created), secret } }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/accounts/:id/webhooks', summary: "An account's endpoints", params: idParam('account'), ok: z.array(WebhookEndpoint), errors: [404] }),
    async (c) => {
      const { db } = c.get('services');
      const endpoints = await listEndpoints(db, liveEndpointsOf(await existingAccount(db, c.req.valid('param').id)));
      return c.json({ status: 'success' as const, message: endpoints.map(presentEndpoint) }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/webhook-deliveries', summary: 'Webhook deliveries, newest first (status=failed: the ones that gave up)', query: ListDeliveriesQuery, ok: pageSchema('data', WebhookDelivery), errors: [422] }),
    async (c) => {
      const query = c.req.valid('query');
      const page = pageRequest(query, 20);
      const { data, total } = await listDeliveries(c.get('services').db, { status: query.status, ...page });
      return c.json({ status: 'success' as const, message: pageObject(c, 'data', data, total, page) }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/webhook-deliveries/:id/retry', summary: 'Send a delivery once more, now', params: idParam('webhook delivery'), ok: WebhookDelivery, errors: [404, 409] }),
    async (c) => c.json({ status: 'success' as const, message: await retryDelivery(c.get('services').db, c.req.valid('param').id) }, 200),
  );

  return router;
}
