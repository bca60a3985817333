import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { ADMIN, contractRouter, endpoint } from '../../http/contract.js';
import { protectReadyMadeResponses } from '../../http/headers.js';
import { idParam } from '../../http/validation.js';
import { requestLogger } from '../../http/request-log.js';
import { pageObject, pageSchema } from '../../http/pagination.js';
import { streamedBody } from '../../http/body-limit.js';
import { LIMITS } from '../../http/server.js';
import { pageRequest } from '../../lib/paging.js';
import type { Services } from '../../runtime/services.js';
import { completeTopUpOrder } from '../fulfilment/index.js';
import { codeLines } from '../inventory/code-lines.js';
import { stockOf } from '../inventory/service.js';
import { licenseAdminRoutes } from '../license/admin-routes.js';
import { statusObserver } from '../order-state/events.js';
import { queueDashboard } from './dashboard.js';
import { requireAdmin } from '../../http/admin-guard.js';
import { AccountKey, AccountPatch, AccountSettings, TestBalance, TestBalanceBody, AdjustBalanceBody, AdminOrder, KeyParams, KeyRevoked, NewKey, NewKeyBody, Balance, CompleteOrderBody, CreateAccountBody, ImportCodesBody, ImportResult, ListOrdersQuery, NewAccount, OrderMoved, OrderRefunded, RefundOrderBody, Stock } from './schemas.js';
import { UtrParam } from '../../http/fields.js';
import { accountKeysOf, awaitedUpTo, changeAccount, importCodes, issueKey, listOrders, moveBalance, openAccount, refundForOperator, RESTOCK_WAIT_MS, restockHere, setTestBalance, withdrawKey } from './service.js';

/** Where the admin router is mounted by the app, plus the dashboard's own prefix. */
const DASHBOARD_PATH = '/admin/queues';

/** `text/plain` imports: one code per line, streamed (never held whole) up to their own limit. */
const codesUpload = streamedBody('text/plain', LIMITS.MAX_UPLOAD_BYTES);

/** Orders an operator moves: logged with the request's id, and counted. */
const operatorMoves = (c: Context<AppEnv>) => statusObserver({ logger: requestLogger(c), metrics: c.get('services').metrics, orderPages: c.get('services').orderPages });

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
      const { db, config } = c.get('services');
      const { id, publicKey, secretKey, apiKey } = await openAccount(db, config, c.req.valid('json'));
      return c.json({ status: 'success' as const, message: { id, publicKey, secretKey, apiKey } }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/accounts/:id/keys',
      summary: 'Issue a key pair of a mode and scope (its secret is shown this once)',
      params: idParam('account'),
      jsonBody: NewKeyBody,
      ok: NewKey,
      errors: [404],
    }),
    async (c) => c.json({ status: 'success' as const, message: await issueKey(c.get('services').db, c.req.valid('param').id, c.req.valid('json')) }, 200),
  );
  router.openapi(
    endpoint({ ...common, method: 'get', path: '/accounts/:id/keys', summary: "An account's keys (no secrets), when each was last used", params: idParam('account'), ok: z.array(AccountKey), errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await accountKeysOf(c.get('services').db, c.req.valid('param').id) }, 200),
  );
  router.openapi(
    endpoint({ ...common, method: 'delete', path: '/accounts/:id/keys/:public_key', summary: 'Revoke a key: its tokens stop at once, in every process', params: KeyParams, ok: KeyRevoked, errors: [404] }),
    async (c) => {
      const { id, public_key } = c.req.valid('param');
      return c.json({ status: 'success' as const, message: await withdrawKey(c.get('services'), id, public_key) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'patch',
      path: '/accounts/:id',
      summary: "Change an account's price tier, its address allow-list, and its currency while its balance is 0 with no order in progress",
      params: idParam('account'),
      jsonBody: AccountPatch,
      ok: AccountSettings,
      errors: [404, 409],
    }),
    async (c) => c.json({ status: 'success' as const, message: await changeAccount(c.get('services'), c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/accounts/:id/balance',
      summary: 'Credit or debit an account balance (never below 0)',
      params: idParam('account'),
      jsonBody: AdjustBalanceBody,
      ok: Balance,
      errors: [404, 409],
    }),
    async (c) => {
      const { amount, reason } = c.req.valid('json');
      return c.json({ status: 'success' as const, message: await moveBalance(c.get('services').db, c.req.valid('param').id, amount, reason) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/accounts/:id/test-balance',
      summary: "Set an account's test balance, the one its test-mode orders are paid from (C25)",
      params: idParam('account'),
      jsonBody: TestBalanceBody,
      ok: TestBalance,
      errors: [404],
    }),
    async (c) => c.json({ status: 'success' as const, message: await setTestBalance(c.get('services').db, c.req.valid('param').id, c.req.valid('json').amount) }, 200),
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/card-services/:id/codes',
      summary: 'Import card codes, then fulfil the waiting stock_short orders',
      params: idParam('card service'),
      jsonBody: ImportCodesBody,
      plainText: {
        description: `One code per line, up to ${LIMITS.MAX_UPLOAD_BYTES / 1024 / 1024} MiB; all codes are stored or none`,
        unsupported: 'unsupported_media_type_codes',
      },
      use: [codesUpload.use],
      ok: ImportResult,
      errors: [404],
    }),
    async (c) => {
      const { db, config } = c.get('services');
      const id = c.req.valid('param').id;
      // Restocked here, as the CLI does: the answer never waits on a worker process, running or stopping; and for 10 s
      // at most (C13).
      const logger = requestLogger(c);
      const restock = awaitedUpTo(restockHere(db, operatorMoves(c)), RESTOCK_WAIT_MS, (err) => logger.error({ err, cardServiceId: id }, 'restock after an import failed; the reconciler restocks later'));
      const deps = { db, codeKey: config.codeEncryptionKey, restock };
      const plain = (c.req.header('content-type') ?? '').toLowerCase().startsWith('text/plain');
      const result = plain
        ? await codesUpload.read(c, (chunks) => importCodes(deps, id, codeLines(chunks)))
        : await importCodes(deps, id, c.req.valid('json').codes);
      return c.json({ status: 'success' as const, message: result }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/card-services/:id/stock', summary: 'Available codes and codes owed to stock_short orders', params: idParam('card service'), ok: Stock, errors: [404] }),
    async (c) => c.json({ status: 'success' as const, message: await stockOf(c.get('services').db, c.req.valid('param').id) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/orders', summary: 'Orders of all accounts, newest first', query: ListOrdersQuery, ok: pageSchema('data', AdminOrder), errors: [422] }),
    async (c) => {
      const query = c.req.valid('query');
      const page = pageRequest(query, 10);
      const { data, total } = await listOrders(c.get('services').db, { status: query.status, mode: query.mode, ...page });
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
      return c.json({ status: 'success' as const, message: await completeTopUpOrder(c.get('services').db, c.req.valid('param').utr, note, operatorMoves(c)) }, 200);
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
      return c.json({ status: 'success' as const, message: await refundForOperator(c.get('services').db, c.req.valid('param').utr, reason, operatorMoves(c)) }, 200);
    },
  );

  router.route('/', licenseAdminRoutes());
  return router;
}

