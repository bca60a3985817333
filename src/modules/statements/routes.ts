import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { adminOnly } from '../../http/admin-guard.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { pageObject } from '../../http/pagination.js';
import { idParam } from '../../http/validation.js';
import { requestLogger } from '../../http/request-log.js';
import { pageRequest } from '../../lib/paging.js';
import { existingAccount } from '../accounts/service.js';
import { signedIn } from '../auth/middleware.js';
import { StatementPage, StatementQuery } from './schemas.js';
import { statementBatches, statementCsv, statementPage } from './service.js';

const CSV_DESCRIPTION = 'format=csv: a header line (id,created_at,kind,amount,balance_after,currency,utr,reason), then every entry of the range, newest first';

/**
 * Text made as it is read: the next chunk is asked for only when the answer has room for it (the server waits for the
 * socket to drain), so the whole never sits in memory. (Node's Readable.toWeb reads ahead of a slow client.) A failure
 * once the answer has begun can only cut it short: it is logged as any unexpected error, with the request's id.
 */
function pulledText(c: Context<AppEnv>, chunks: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        } catch (err) {
          requestLogger(c).error({ err }, 'unexpected error while streaming the answer');
          controller.error(err);
        }
      },
      // A client gone mid-export stops the reading.
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The statement of `accountId` as the query asks: a page of JSON, or every entry of the range streamed as CSV; of its
 * live balance, or of its test balance for a test token (C25).
 */
async function statement(c: Context<AppEnv>, accountId: number, query: typeof StatementQuery._output, livemode = true) {
  const { sql } = c.get('services');
  const range = { from: query.from, to: query.to, livemode };
  if (query.format === 'csv') {
    return c.body(pulledText(c, statementCsv(statementBatches(sql, accountId, range))), 200, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="statement-${accountId}.csv"`,
    });
  }
  const page = pageRequest(query, 20);
  const { entries, total } = await statementPage(sql, accountId, range, page);
  return c.json({ status: 'success' as const, message: pageObject(c, 'data', entries, total, page) }, 200);
}

/** C24 for clients: their own ledger. */
export function statementRoutes() {
  const router = contractRouter();
  router.openapi(
    endpoint({
      method: 'get',
      path: '/account/statement',
      summary: 'Your statement: every balance move, newest first, with the balance after it',
      tag: 'Account',
      guard: signedIn,
      query: StatementQuery,
      ok: StatementPage,
      csv: CSV_DESCRIPTION,
      errors: [422],
    }),
    (c) => statement(c, c.get('account').id, c.req.valid('query'), c.get('account').livemode),
  );
  return router;
}

/** C24 for operators: any account's statement. Mounted under /admin (behind its guard). */
export function statementAdminRoutes() {
  const router = contractRouter();
  router.openapi(
    endpoint({
      method: 'get',
      path: '/accounts/:id/statement',
      summary: "An account's statement, newest first",
      tag: 'Admin',
      guard: adminOnly,
      params: idParam('account'),
      query: StatementQuery,
      ok: StatementPage,
      csv: CSV_DESCRIPTION,
      errors: [404, 422],
    }),
    async (c) => statement(c, await existingAccount(c.get('services').db, c.req.valid('param').id), c.req.valid('query')),
  );
  return router;
}
