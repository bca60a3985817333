import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { AppError } from '../../errors.js';
import { readBody } from '../../http/body.js';
import { success } from '../../http/respond.js';
import { validate } from '../../http/validation.js';
import { rotateApiKey } from '../accounts/service.js';
import { accountIdParam, createItemBody, createPurchaseBody } from './schemas.js';
import { issueItem, issuePurchase } from './service.js';

type Ctx = Context<AppEnv>;

/** POST /admin/license/items: a license item for an account. */
export async function createItemHandler(c: Ctx) {
  const input = validate(createItemBody, await readBody(c));
  return success(c, await issueItem(c.var.services.db, c.var.services.config.STORE_CURRENCY, input));
}

/** POST /admin/license/purchases: records a purchase; the code is shown this once. */
export async function createPurchaseHandler(c: Ctx) {
  const input = validate(createPurchaseBody, await readBody(c));
  const { db, config } = c.var.services;
  return success(c, await issuePurchase(db, config.codeEncryptionKey, input));
}

/** POST /admin/accounts/:id/api-key: a new Interface B key; the old one stops working at once. */
export async function rotateApiKeyHandler(c: Ctx) {
  const { id } = validate(accountIdParam, c.req.param(), 'path');
  const apiKey = await rotateApiKey(c.var.services.db, id);
  if (!apiKey) throw new AppError('not_found', 'Account not found.');
  return success(c, { id, apiKey });
}
