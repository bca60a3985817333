import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AppError } from '../../core/errors.js';
import { clientIp } from '../../http/client-ip.js';
import type { AppEnv } from '../../http/context.js';
import { blockedForSeconds, consumeAll, type LimitCheck } from '../../lib/rate-limit.js';
import type { Services } from '../../runtime/services.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { requestLogger } from '../../http/request-log.js';
import { scheduleRoutingStep } from '../../queues/index.js';
import { adminOnly } from '../../http/admin-guard.js';
import { UtrParam } from '../../http/fields.js';
import { id, idParam } from '../../http/validation.js';
import { statusObserver } from '../order-state/events.js';
import { receiveCallback } from './callbacks.js';
import { settleAttemptForOperator } from '../fulfilment/index.js';
import {
  AttemptParams,
  AttemptSettled,
  CallbackAccepted,
  MarginQuery,
  MarginReport,
  OrderWithAttempts,
  Provider,
  ProviderBody,
  ProviderPatch,
  Route,
  RoutesBody,
  SettleAttemptBody,
} from './schemas.js';
import { createProvider, listProviders, marginReport, routesOf, setRoutes, showOrder, updateProvider } from './service.js';

/** C22 for operators: providers, routes, one order with its attempts, the margin report. Mounted under /admin (behind its guard). */
export function providerAdminRoutes() {
  const router = contractRouter();
  const common = { tag: 'Admin', guard: adminOnly };
  const codeKey = (c: Context<AppEnv>) => c.get('services').config.codeEncryptionKey;

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/providers', summary: 'Add a top-up provider (its credentials are sealed and never shown again)', jsonBody: ProviderBody, ok: Provider }),
    async (c) => c.json({ status: 'success' as const, message: await createProvider(c.get('services').db, codeKey(c), c.req.valid('json')) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'patch', path: '/providers/:id', summary: 'Change a provider (credentials sent replace the stored ones)', params: idParam('provider'), jsonBody: ProviderPatch, ok: Provider, errors: [404, 409] }),
    async (c) => c.json({ status: 'success' as const, message: await updateProvider(c.get('services').db, codeKey(c), c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/providers', summary: 'Providers with their circuit state, last error and last known balance', ok: z.array(Provider) }),
    async (c) => c.json({ status: 'success' as const, message: await listProviders(c.get('services').db) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'put', path: '/top-up-services/:id/routes', summary: "Replace a top-up service's provider routes, in priority order", params: idParam('top-up service'), jsonBody: RoutesBody, ok: z.array(Route), errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await setRoutes(c.get('services').db, c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/top-up-services/:id/routes', summary: "A top-up service's provider routes", params: idParam('top-up service'), ok: z.array(Route), errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await routesOf(c.get('services').db, c.req.valid('param').id) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/orders/:utr', summary: 'One order of any account, with every provider attempt', params: UtrParam, ok: OrderWithAttempts, errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await showOrder(c.get('services').db, c.req.valid('param').utr) as z.infer<typeof OrderWithAttempts> }, 200),
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/orders/:utr/attempts/:id/settle',
      summary: "Settle a top-up's open provider attempt with what the provider said",
      description:
        'While an attempt is open the order can be neither refunded nor completed by hand. Completed: the order completes; refused: it goes on to its next route (refunded when none is left).',
      params: AttemptParams,
      jsonBody: SettleAttemptBody,
      ok: AttemptSettled,
      errors: [404, 409],
    }),
    async (c) => {
      const services = c.get('services');
      const { utr, id } = c.req.valid('param');
      const deps = { db: services.db, observe: statusObserver({ logger: requestLogger(c), metrics: services.metrics, orderPages: services.orderPages }), scheduleStep: scheduleRoutingStep(services.queues) };
      return c.json({ status: 'success' as const, message: await settleAttemptForOperator(deps, utr, id, c.req.valid('json')) }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/reports/margin', summary: 'Sales, cost and margin of delivered top-ups per provider and service', query: MarginQuery, ok: MarginReport, errors: [422] }),
    async (c) => {
      const { from, to } = c.req.valid('query');
      return c.json({ status: 'success' as const, message: await marginReport(c.get('services').db, c.get('services').config, from, to) }, 200);
    },
  );

  return router;
}

/** The callback's provider id: any text, so that one that is no provider's id is answered as a bad signature (C22). */
const CallbackParams = z.object({ id: z.string().openapi({ example: '3', description: "The provider's id (GET /admin/providers)" }) });

/**
 * A provider's signed callback about an order sent to it (C22): no token, the signature is the credential. Refused
 * callbacks count against their client address as failed token requests do (AUTH_FAILURES_PER_IP per
 * AUTH_FAILURE_WINDOW_SECONDS, counted apart from them): past it, 429 before any signature is checked.
 */
export function providerCallbackRoutes({ limiter, config }: Services) {
  const failures = limiter(`${config.BULLMQ_PREFIX}:callback-failures`, config.AUTH_FAILURES_PER_IP, config.AUTH_FAILURE_WINDOW_SECONDS);
  const router = contractRouter();
  router.openapi(
    endpoint({
      method: 'post',
      path: '/providers/:id',
      tag: 'Providers',
      summary: "A provider's signed status callback",
      description: "The body is the provider's protocol's (http: `{reference, status, provider_reference?, reason?}` signed with X-Signature and X-Timestamp); it can only settle an order sent to that provider.",
      params: CallbackParams,
      ok: CallbackAccepted,
      errors: [401, 404, 429],
    }),
    async (c) => {
      const services = c.get('services');
      const checks: LimitCheck[] = [[failures, clientIp(c)]];
      const wait = await blockedForSeconds(checks);
      if (wait > 0) throw new AppError('rate_limited', undefined, { 'Retry-After': String(wait) });
      const deps = {
        db: services.db,
        logger: requestLogger(c),
        observe: statusObserver({ logger: requestLogger(c), metrics: services.metrics, orderPages: services.orderPages }),
        codeKey: services.config.codeEncryptionKey,
        scheduleStep: scheduleRoutingStep(services.queues),
      };
      // C22: an id that is no provider's, whatever its form, is refused as a bad signature is.
      const providerId = id().safeParse(c.req.valid('param').id).data ?? null;
      const result = await receiveCallback(deps, providerId, { headers: c.req.raw.headers, body: await c.req.text() }).catch(async (err: unknown) => {
        if (err instanceof AppError && err.code === 'bad_signature') await consumeAll(checks);
        throw err;
      });
      return c.json({ status: 'success' as const, message: result }, 200);
    },
  );
  return router;
}
