import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import type { Services } from '../../services.js';
import { protectReadyMadeResponses } from '../../http/headers.js';
import { route, type RouteDoc } from '../../http/route.js';
import { licenseAdminRoutes } from '../license/index.js';
import { queueDashboard } from './dashboard.js';
import { requireAdmin } from './guard.js';
import {
  adjustBalanceHandler,
  completeOrderHandler,
  createAccountHandler,
  importCodesHandler,
  listOrdersHandler,
  refundOrderHandler,
  stockHandler,
} from './handlers.js';
import {
  AdjustBalanceBody,
  CompleteOrderBody,
  CreateAccountBody,
  ImportCodesBody,
  ListOrdersQuery,
  RefundOrderBody,
} from './schemas.js';

const tags = ['Admin'];
/** Where the admin router is mounted by the app, plus the dashboard's own prefix. */
const DASHBOARD_PATH = '/admin/queues';

/** C13 operator API and the queue dashboard, mounted at /admin. */
export function adminRoutes(services: Services) {
  const router = new OpenAPIHono<AppEnv>();
  // The dashboard also takes HTTP Basic so a browser can open it; it is guarded before the rest.
  router.use('/queues', protectReadyMadeResponses, requireAdmin({ basic: true }));
  router.use('/queues/*', protectReadyMadeResponses, requireAdmin({ basic: true }));
  // Browsers often add the trailing slash; the dashboard's own routes do not.
  router.get('/queues/', (c) => c.redirect(DASHBOARD_PATH));
  router.route('/queues', queueDashboard(services, DASHBOARD_PATH));
  router.use('*', requireAdmin());

  const doc = (method: 'get' | 'post', path: string, summary: string, schemas: Pick<RouteDoc, 'body' | 'query'> = {}): RouteDoc => ({
    method,
    path,
    summary,
    tags,
    security: 'admin',
    ...schemas,
  });
  route(router, doc('post', '/accounts', 'Create an account (its secrets are shown this once)', { body: CreateAccountBody }), createAccountHandler);
  route(router, doc('post', '/accounts/:id/balance', 'Credit or debit an account balance', { body: AdjustBalanceBody }), adjustBalanceHandler);
  route(
    router,
    doc('post', '/card-services/:id/codes', 'Import card codes (JSON list or text/plain, one per line) and restock', { body: ImportCodesBody }),
    importCodesHandler,
  );
  route(router, doc('get', '/card-services/:id/stock', 'Available codes and codes owed to stock_short orders'), stockHandler);
  route(router, doc('get', '/orders', 'Orders of all accounts, newest first', { query: ListOrdersQuery }), listOrdersHandler);
  route(router, doc('post', '/orders/:utr/complete', 'Mark a top-up order delivered', { body: CompleteOrderBody }), completeOrderHandler);
  route(router, doc('post', '/orders/:utr/refund', 'Refund a non-completed order', { body: RefundOrderBody }), refundOrderHandler);
  router.route('/', licenseAdminRoutes());
  return router;
}
