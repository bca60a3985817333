import { ADMIN, contractRouter, endpoint } from '../../http/contract.js';
import { protectReadyMadeResponses } from '../../http/headers.js';
import { pageObject, pageSchema } from '../../http/pagination.js';
import { validate } from '../../http/validation.js';
import { pageRequest } from '../../lib/paging.js';
import type { Services } from '../../services.js';
import { completeTopUpOrder } from '../fulfilment/index.js';
import { stockOf } from '../inventory/service.js';
import { licenseAdminRoutes } from '../license/admin-routes.js';
import { queueDashboard } from './dashboard.js';
import { requireAdmin } from './guard.js';
import {
  AdjustBalanceBody,
  AdminOrder,
  Balance,
  CompleteOrderBody,
  CreateAccountBody,
  IdParam,
  ImportCodesBody,
  ImportResult,
  ListOrdersQuery,
  NewAccount,
  OrderMoved,
  OrderRefunded,
  RefundOrderBody,
  Stock,
  UtrParam,
} from './schemas.js';
import { importCodes, listOrders, moveBalance, openAccount, refundForOperator, restockThroughQueue } from './service.js';

/** Where the admin router is mounted by the app, plus the dashboard's own prefix. */
const DASHBOARD_PATH = '/admin/queues';

/** `text/plain` imports: one code per line, blank lines ignored. */
const codeLines = (text: string) => text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');

/** C13 operator API and the queue dashboard, mounted at /admin. */
export function adminRoutes(services: Services) {
  const router = contractRouter();
  // The dashboard also takes HTTP Basic so a browser can open it; it is guarded before the rest.
  router.use('/queues', protectReadyMadeResponses, requireAdmin({ basic: true }));
  router.use('/queues/*', protectReadyMadeResponses, requireAdmin({ basic: true }));
  // Browsers often add the trailing slash; the dashboard's own routes do not.
  router.get('/queues/', (c) => c.redirect(DASHBOARD_PATH));
  router.route('/queues', queueDashboard(services, DASHBOARD_PATH));
  router.use('*', requireAdmin());

  const tag = 'Admin';
  // Every admin route is behind requireAdmin (above); the guard here documents it.
  const common = { tag, guard: ADMIN };

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/accounts', summary: 'Create an account (its secrets are shown this once)', jsonBody: CreateAccountBody, ok: NewAccount }),
    async (c) => {
      const { db, config } = c.var.services;
      const { id, publicKey, secretKey, apiKey } = await openAccount(db, config, c.req.valid('json'));
      return c.json({ status: 'success' as const, message: { id, publicKey, secretKey, apiKey } }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/accounts/:id/balance',
      summary: 'Credit or debit an account balance (never below 0)',
      params: IdParam,
      jsonBody: AdjustBalanceBody,
      ok: Balance,
      errors: [404, 409],
    }),
    async (c) => {
      const { amount, reason } = c.req.valid('json');
      return c.json({ status: 'success' as const, message: await moveBalance(c.var.services.db, c.req.valid('param').id, amount, reason) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/card-services/:id/codes',
      summary: 'Import card codes, then fulfil the waiting stock_short orders',
      params: IdParam,
      jsonBody: ImportCodesBody,
      plainText: 'One code per line',
      ok: ImportResult,
      errors: [404],
    }),
    async (c) => {
      const plain = (c.req.header('content-type') ?? '').toLowerCase().startsWith('text/plain');
      const { codes } = plain ? validate(ImportCodesBody, { codes: codeLines(await c.req.text()) }) : c.req.valid('json');
      const { db, config } = c.var.services;
      const result = await importCodes({ db, codeKey: config.codeEncryptionKey, restock: restockThroughQueue(c.var.services) }, c.req.valid('param').id, codes);
      return c.json({ status: 'success' as const, message: result }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/card-services/:id/stock', summary: 'Available codes and codes owed to stock_short orders', params: IdParam, ok: Stock, errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await stockOf(c.var.services.db, c.req.valid('param').id) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/orders', summary: 'Orders of all accounts, newest first', query: ListOrdersQuery, ok: pageSchema('data', AdminOrder), errors: [422] }),
    async (c) => {
      const query = c.req.valid('query');
      const page = pageRequest(query, 10);
      const { data, total } = await listOrders(c.var.services.db, { status: query.status, ...page });
      return c.json({ status: 'success' as const, message: pageObject(c, 'data', data, total, page) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/orders/:utr/complete',
      summary: 'Mark a top-up order delivered',
      params: UtrParam,
      jsonBody: CompleteOrderBody,
      ok: OrderMoved,
      errors: [404, 409],
    }),
    async (c) => {
      const { note } = c.req.valid('json');
      return c.json({ status: 'success' as const, message: await completeTopUpOrder(c.var.services.db, c.req.valid('param').utr, note) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/orders/:utr/refund',
      summary: 'Refund an order that is not completed',
      params: UtrParam,
      jsonBody: RefundOrderBody,
      ok: OrderRefunded,
      errors: [404, 409],
    }),
    async (c) => {
      const { reason } = c.req.valid('json');
      return c.json({ status: 'success' as const, message: await refundForOperator(c.var.services.db, c.req.valid('param').utr, reason) }, 200);
    },
  );

  router.route('/', licenseAdminRoutes());
  return router;
}

