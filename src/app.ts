import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv, Envelope } from './http/context.js';
import type { Services } from './runtime/services.js';
import { bodyLimit } from './http/body-limit.js';
import { AppError } from './core/errors.js';
import { asAppError } from './http/failures.js';
import { requestLog } from './http/request-log.js';
import { requestIdentity } from './http/request-id.js';
import { cachedReadLane } from './http/cached-lane.js';
import { endpoint, json, withRequiredBodies } from './http/contract.js';
import { ASSETS_PATH, baseUrl } from './http/urls.js';
import { protectiveHeaders } from './http/headers.js';
import { assetFiles } from './http/assets.js';
import { docsRoutes } from './http/docs.js';
import { allowedMethods } from './http/allowed-methods.js';
import { until } from './lib/deadline.js';
import { writeProbe } from './lib/redis.js';
import { metricsAccess } from './lib/bearer.js';
import { LIMITS } from './http/server.js';
import { adminRoutes } from './modules/admin/routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { knownSignedInAccount } from './modules/auth/middleware.js';
import { catalogRoutes } from './modules/catalog/routes.js';
import { licenseRoutes } from './modules/license/routes.js';
import { inCallersLanguage } from './modules/license/messages.js';
import { orderRoutes } from './modules/orders/routes.js';
import { reviewRoutes } from './modules/reviews/routes.js';
import { catalogAdminRoutes } from './modules/catalog-admin/routes.js';
import { documentWebhookEvents, webhookAdminRoutes, webhookRoutes } from './modules/webhooks/routes.js';
import { statementAdminRoutes, statementRoutes } from './modules/statements/routes.js';
import { providerAdminRoutes, providerCallbackRoutes } from './modules/providers/routes.js';

type DependencyState = 'up' | 'read_only' | 'down';

/**
 * Whether PostgreSQL and Redis take writes (C21): a PostgreSQL standby in recovery, a Redis replica (READONLY) or
 * a sentinel address is not ready, whatever a ping says. A check without an answer within 2 s counts as down.
 */
async function dependenciesTakeWrites(services: Services): Promise<[DependencyState, DependencyState]> {
  const deadline = Date.now() + 2000;
  const state = async (check: Promise<DependencyState>) => {
    let answer: DependencyState = 'down';
    await until(deadline, check.then((s) => (answer = s), () => (answer = 'down')));
    return answer;
  };
  return Promise.all([
    state(services.sql<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`.then(([row]) => (row?.standby ? 'read_only' : 'up'))),
    state(
      writeProbe(services.redis, services.config.BULLMQ_PREFIX).then(
        () => 'up' as const,
        (err: Error) => (err.message.startsWith('READONLY') ? 'read_only' : 'down'),
      ),
    ),
  ]);
}

/** Renders a failure in the caller's envelope: A `{status: failed, errors}`, B `{status: error, msg}`. */
function failure(c: Context<AppEnv>, error: AppError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  // Server-side failures carry the request id that the log line has too.
  const extra = error.status >= 500 ? { request_id: c.get('requestId') } : {};
  const body =
    c.get('envelope') === 'B'
      ? { status: 'error', msg: Array.isArray(error.errors) ? error.errors.join(' ') : error.errors, ...extra }
      : { status: 'failed', errors: error.errors, ...extra };
  return c.json(body, error.status as 400);
}

const envelope = (kind: Envelope) => async (c: Context<AppEnv>, next: () => Promise<void>) => {
  c.set('envelope', kind);
  await next();
};

/** Answers repeated catalog reads and order lists before the app does (src/http/cached-lane.ts), with the app's token check. */
export const createLane = (services: Services) => cachedReadLane(services, knownSignedInAccount);

/** The whole HTTP surface. `services` are opened by the caller (main, tests, bench) and closed by it. */
export function createApp(services: Services) {
  const app = new OpenAPIHono<AppEnv>();

  app.use('*', requestIdentity);
  app.use('*', protectiveHeaders);
  const methodsOf = allowedMethods(app as never);
  app.use('*', async (c, next) => {
    c.set('services', services);
    c.set('allowedMethods', methodsOf);
    c.set('envelope', c.req.path.startsWith('/license-api') ? 'B' : 'A');
    await next();
  });
  app.use('*', requestLog);
  app.use('*', bodyLimit(LIMITS.MAX_BODY_BYTES));

  // Interface A: the token endpoint is public; every other route declares `security: 'token'`.
  const api = new OpenAPIHono<AppEnv>();
  api.use('*', envelope('A'));
  api.route('/', authRoutes(services));
  api.route('/', catalogRoutes());
  api.route('/', reviewRoutes());
  api.route('/', orderRoutes());
  api.route('/', webhookRoutes());
  api.route('/', statementRoutes());
  app.route('/api', api);

  const license = new OpenAPIHono<AppEnv>();
  license.use('*', envelope('B'));
  license.route('/', licenseRoutes(services));
  app.route('/license-api', license);

  const admin = new OpenAPIHono<AppEnv>();
  admin.use('*', envelope('A'));
  admin.route('/', adminRoutes(services));
  // After adminRoutes: its requireAdmin middleware guards every /admin route.
  admin.route('/', webhookAdminRoutes());
  admin.route('/', statementAdminRoutes());
  admin.route('/', catalogAdminRoutes());
  admin.route('/', providerAdminRoutes());
  app.route('/admin', admin);

  // Top-up providers' callbacks (C22): each signed with its provider's credentials.
  const callbacks = new OpenAPIHono<AppEnv>();
  callbacks.use('*', envelope('A'));
  callbacks.use('*', bodyLimit(LIMITS.MAX_CALLBACK_BYTES));
  callbacks.route('/', providerCallbackRoutes(services));
  app.route('/callbacks', callbacks);

  // Operational endpoints (C16): no token, but /metrics.
  app.openapi(
    endpoint({ method: 'get', path: '/health', summary: 'The process is up', tag: 'Operations', ok: z.object({ status: z.literal('ok') }), envelope: 'whole' }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );
  const Dependency = z.enum(['up', 'read_only', 'down']);
  const Readiness = z.object({
    status: z.enum(['ready', 'unavailable', 'draining']),
    postgres: Dependency,
    redis: Dependency,
    workers: z
      .enum(['starting', 'up', 'down'])
      .optional()
      .openapi({ description: 'The worker process `npm start` supervises (absent where the process runs none); it does not change `status`: orders are taken while it is down' }),
  });
  app.openapi(
    {
      ...endpoint({
        method: 'get',
        path: '/ready',
        summary: 'PostgreSQL and Redis take writes, and the process is not draining (answered within 2 s)',
        tag: 'Operations',
        ok: Readiness,
        envelope: 'whole',
      }),
      responses: { 200: json(Readiness, 'Ready'), 503: json(Readiness, 'A dependency cannot take writes, or the process is draining after SIGTERM') },
    },
    async (c) => {
      const [postgres, redis] = await dependenciesTakeWrites(services);
      const status: z.infer<typeof Readiness>['status'] = services.lifecycle.draining ? 'draining' : postgres === 'up' && redis === 'up' ? 'ready' : 'unavailable';
      return c.json({ status, postgres, redis, workers: services.lifecycle.workers }, status === 'ready' ? 200 : 503);
    },
  );
  const metrics = endpoint({
    method: 'get',
    path: '/metrics',
    summary: 'Requests, orders, queues, jobs, stock and process metrics (Prometheus text format); served while METRICS_TOKEN is set',
    tag: 'Operations',
    ok: z.string(),
    envelope: 'whole',
    guard: { security: [{ metricsToken: [] }] },
  });
  const exposition = z.string().openapi({ example: 'orders_placed_total{kind="card",mode="live"} 42' });
  // Without METRICS_TOKEN there is no /metrics at all (C16): 404 whatever the method, as for any unknown path.
  if (services.config.METRICS_TOKEN) {
    app.openapi(
      {
        ...metrics,
        responses: { ...metrics.responses, 200: { description: 'Every series of this process', content: { 'text/plain': { schema: exposition } } } },
      },
      async (c) => {
        const access = metricsAccess(c.req.header('authorization'), services.config.METRICS_TOKEN);
        if (access !== 'allowed') throw new AppError('metrics_forbidden', undefined, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
        return c.text(await services.metrics.render(), 200, { 'Content-Type': services.metrics.contentType });
      },
    );
  }
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The token of POST /api/generate/authorization-token; `Authorization: <token>` works too',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'Interface B: also as query or body field `api_key`, or `Authorization: Bearer <key>`',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'metricsToken', { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminToken', { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' });
  documentWebhookEvents(app);
  // OpenAPI 3.1's SPDX identifier, which the library's type of the license object lacks.
  const proprietary = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
  app.get('/openapi.json', (c) => {
    const document = app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Top-up and gift-card store API',
        version: '1.0.0',
        description: 'Interface A (/api/), Interface B (/license-api/), the admin API (/admin/) and operations.',
        license: proprietary,
      },
      servers: [{ url: baseUrl(c), description: 'This server' }],
    });
    return c.json(withRequiredBodies(document, app));
  });
  app.route('/docs', docsRoutes());
  app.get(`${ASSETS_PATH}/*`, assetFiles);

  // A path some route answers, asked with another method: 405 naming the methods it takes.
  app.notFound((c) => {
    const allowed = methodsOf(c.req.path);
    // A route that found nothing to serve (a missing asset) is a plain 404 too.
    if (allowed.length === 0 || allowed.includes(c.req.method)) return failure(c, new AppError('route_not_found'));
    return failure(c, new AppError('method_not_allowed', `The ${c.req.method} method is not allowed here; use ${allowed.join(', ')}.`, { Allow: allowed.join(', ') }));
  });
  // Interface B answers in the caller's language, also for failures raised before its routes (the body limit).
  app.onError((err, c) => failure(c, c.get('envelope') === 'B' ? inCallersLanguage(c, asAppError(c, err)) : asAppError(c, err)));

  return app;
}

export type App = ReturnType<typeof createApp>;
