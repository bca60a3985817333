import type { Context } from 'hono';
import { readBody } from '../../http/body.js';
import type { AppEnv } from '../../http/context.js';
import { pageObject } from '../../http/pagination.js';
import { pageRequest } from '../../lib/paging.js';
import { success } from '../../http/respond.js';
import { validate } from '../../http/validation.js';
import { completeTopUpOrder } from '../fulfilment/index.js';
import { stockOf } from '../inventory/service.js';
import {
  AdjustBalanceBody,
  CompleteOrderBody,
  CreateAccountBody,
  IdParam,
  ImportCodesBody,
  ListOrdersQuery,
  RefundOrderBody,
  UtrParam,
} from './schemas.js';
import { importCodes, listOrders, moveBalance, openAccount, refundForOperator, restockThroughQueue } from './service.js';

type Ctx = Context<AppEnv>;

const pathId = (c: Ctx): number => validate(IdParam, c.req.param(), 'path').id;
const pathUtr = (c: Ctx): string => validate(UtrParam, c.req.param(), 'path').utr;

/** `text/plain` is one code per line; anything else is read as a `{codes: [...]}` body. */
async function readCodes(c: Ctx): Promise<unknown> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'text/plain') return readBody(c);
  const codes = (await c.req.text()).split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  return { codes };
}

export async function createAccountHandler(c: Ctx) {
  const { db, config } = c.var.services;
  const input = validate(CreateAccountBody, await readBody(c));
  const { id, publicKey, secretKey, apiKey } = await openAccount(db, config, input);
  return success(c, { id, publicKey, secretKey, apiKey });
}

export async function adjustBalanceHandler(c: Ctx) {
  const id = pathId(c);
  const { amount, reason } = validate(AdjustBalanceBody, await readBody(c));
  return success(c, await moveBalance(c.var.services.db, id, amount, reason));
}

export async function importCodesHandler(c: Ctx) {
  const id = pathId(c);
  const { codes } = validate(ImportCodesBody, await readCodes(c));
  const { db, config } = c.var.services;
  return success(c, await importCodes({ db, codeKey: config.codeEncryptionKey, restock: restockThroughQueue(c.var.services) }, id, codes));
}

export async function stockHandler(c: Ctx) {
  return success(c, await stockOf(c.var.services.db, pathId(c)));
}

export async function listOrdersHandler(c: Ctx) {
  const query = validate(ListOrdersQuery, c.req.query(), 'query');
  const page = pageRequest(query, 10);
  const { data, total } = await listOrders(c.var.services.db, { status: query.status, ...page });
  return success(c, pageObject(c, 'data', data, total, page));
}

export async function completeOrderHandler(c: Ctx) {
  const { note } = validate(CompleteOrderBody, await readBody(c));
  return success(c, await completeTopUpOrder(c.var.services.db, pathUtr(c), note));
}

export async function refundOrderHandler(c: Ctx) {
  const { reason } = validate(RefundOrderBody, await readBody(c));
  return success(c, await refundForOperator(c.var.services.db, pathUtr(c), reason));
}
