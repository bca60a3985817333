import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { requestId } from 'hono/request-id';
import { swaggerUI } from '@hono/swagger-ui';
import { sql } from 'drizzle-orm';
import type { AppEnv, Envelope } from './http/context.js';
import type { Services } from './services.js';
import { bodyLimit } from './http/body-limit.js';
import { AppError } from './errors.js';
import { asAppError } from './http/failures.js';
import { protectiveHeaders, protectReadyMadeResponses } from './http/headers.js';
import { until } from './lib/deadline.js';
import { LIMITS } from './http/server.js';
import { authRoutes } from './modules/auth/index.js';
import { catalogRoutes } from './modules/catalog/index.js';
import { adminRoutes } from './modules/admin/index.js';
import { licenseRoutes } from './modules/license/index.js';
import { orderRoutes } from './modules/orders/routes.js';
import { reviewRoutes } from './modules/reviews/index.js';

/** Renders a failure in the caller's envelope: A `{status: failed, errors}`, B `{status: error, msg}`. */
function failure(c: Context<AppEnv>, error: AppError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  // Server-side failures carry the request id that the log line has too.
  const extra = error.status >= 500 ? { request_id: c.var.requestId } : {};
  const body =
    c.var.envelope === 'B'
      ? { status: 'error', msg: Array.isArray(error.errors) ? error.errors.join(' ') : error.errors, ...extra }
      : { status: 'failed', errors: error.errors, ...extra };
  return c.json(body, error.status as 400);
}

const envelope = (kind: Envelope) => async (c: Context<AppEnv>, next: () => Promise<void>) => {
  c.set('envelope', kind);
  await next();
};

/** The whole HTTP surface. `services` are opened by the caller (main, tests, bench) and closed by it. */
export function createApp(services: Services) {
  const app = new OpenAPIHono<AppEnv>();

  app.use('*', requestId({ headerName: 'X-Request-Id' }));
  app.use('*', protectiveHeaders);
  app.use('*', async (c, next) => {
    c.set('services', services);
    c.set('envelope', c.req.path.startsWith('/license-api') ? 'B' : 'A');
    await next();
  });
  app.use('*', bodyLimit(LIMITS.MAX_BODY_BYTES));

  // Interface A: the token endpoint is public; every other route declares `security: 'token'`.
  const api = new OpenAPIHono<AppEnv>();
  api.use('*', envelope('A'));
  api.route('/', authRoutes(services));
  api.route('/', catalogRoutes());
  api.route('/', reviewRoutes());
  api.route('/', orderRoutes());
  app.route('/api', api);

  const license = new OpenAPIHono<AppEnv>();
  license.use('*', envelope('B'));
  license.route('/', licenseRoutes(services));
  app.route('/license-api', license);

  const admin = new OpenAPIHono<AppEnv>();
  admin.use('*', envelope('A'));
  admin.route('/', adminRoutes(services));
  app.route('/admin', admin);

  // Operational endpoints (C16): no token.
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    // Answered within 2 s (C16): a check that has not answered by then counts as down.
    const deadline = Date.now() + 2000;
    const up = async (check: Promise<unknown>) => {
      let answered = false;
      await until(deadline, check.then(() => (answered = true)));
      return answered ? 'up' : 'down';
    };
    const [postgres, redis] = await Promise.all([up(services.db.execute(sql`select 1`)), up(services.redis.ping())]);
    const ready = postgres === 'up' && redis === 'up';
    return c.json({ status: ready ? 'ready' : 'unavailable', postgres, redis }, ready ? 200 : 503);
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerToken', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminToken', { type: 'http', scheme: 'bearer' });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'Top-up and gift-card store API', version: '1.0.0' },
  });
  app.get('/docs', protectReadyMadeResponses, swaggerUI({ url: '/openapi.json' }));

  app.notFound((c) => failure(c, new AppError('route_not_found')));
  app.onError((err, c) => failure(c, asAppError(c, err)));

  return app;
}

export type App = ReturnType<typeof createApp>;
