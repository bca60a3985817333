import type { Context, ErrorHandler } from 'hono';
import { clientIp } from '../../http/client-ip.js';
import type { AppEnv } from '../../http/context.js';
import type { Services } from '../../services.js';
import { AppError } from '../../errors.js';
import { asAppError } from '../../http/failures.js';
import { readBody } from '../../http/body.js';
import { assetUrl } from '../../http/urls.js';
import { validate } from '../../http/validation.js';
import { isBlank } from '../../lib/text.js';
import { consumeAll, createLimiter, type Limiter } from '../../lib/rate-limit.js';
import { bearerToken } from '../auth/middleware.js';
import { licenseError, SHARED_FAILURES } from './messages.js';
import { presentAccount, presentItem, presentPurchase } from './presenters.js';
import { itemQuery, validationBody } from './schemas.js';
import { accountByApiKey, findItem, findPurchase, listItems, type LicenseAccount } from './service.js';

type Ctx = Context<AppEnv>;

const asset = (c: Ctx) => (path: string | null | undefined) => assetUrl(c, path);

/** C12: the key from `X-API-Key`, `Authorization: Bearer`, query `api_key` or body field `api_key`, in that order. */
function presentedApiKey(c: Ctx, body: Record<string, unknown>): string | null {
  const candidates = [c.req.header('x-api-key'), bearerToken(c.req.header('authorization')), c.req.query('api_key'), body.api_key];
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim().slice(0, 512);
  }
  return null;
}

async function authenticate(c: Ctx, body: Record<string, unknown> = {}): Promise<LicenseAccount> {
  const key = presentedApiKey(c, body);
  if (!key) throw licenseError(c, 'missing_api_key');
  const account = await accountByApiKey(c.var.services.db, key);
  if (!account) throw licenseError(c, 'invalid_api_key');
  return account;
}

/** B1 GET account/details. */
export async function accountDetails(c: Ctx) {
  const account = await authenticate(c);
  return c.json({ status: 'success', data: presentAccount(account, asset(c)) });
}

/** B2 GET items/all: the key owner's items. */
export async function allItems(c: Ctx) {
  const account = await authenticate(c);
  const items = await listItems(c.var.services.db, account.id);
  if (!items.length) throw licenseError(c, 'no_items_found');
  return c.json({ status: 'success', items: items.map((item) => presentItem(item, asset(c))) });
}

/** B3 GET items/item?item_id=: one of the key owner's items. */
export async function oneItem(c: Ctx) {
  const account = await authenticate(c);
  const item = await findItem(c.var.services.db, account.id, itemId(c));
  if (!item) throw licenseError(c, 'item_not_found');
  return c.json({ status: 'success', item: presentItem(item, asset(c)) });
}

/** `item_id` of the query: not a positive integer → invalid; one past the id range names no item (C2). */
function itemId(c: Ctx): number {
  try {
    return validate(itemQuery, c.req.query(), 'query').item_id;
  } catch (err) {
    throw licenseError(c, err instanceof AppError && err.code === 'not_found' ? 'item_not_found' : 'invalid_item_id');
  }
}

export type ValidationLimiters = { perKey: Limiter; perIp: Limiter };

export function createValidationLimiters({ redis, config }: Services): ValidationLimiters {
  const prefix = `${config.BULLMQ_PREFIX}:license-validations`;
  const window = config.LICENSE_VALIDATION_WINDOW_SECONDS;
  return {
    perKey: createLimiter(redis, `${prefix}:key`, config.LICENSE_VALIDATIONS_PER_KEY, window),
    perIp: createLimiter(redis, `${prefix}:ip`, config.LICENSE_VALIDATIONS_PER_IP, window),
  };
}

/**
 * B4 POST purchases/validation. Every attempt counts against the key's owner and the client address,
 * so purchase codes cannot be guessed by volume; `purchase_code` comes from the body (JSON or form) or the query.
 */
export function validatePurchase(limiters: ValidationLimiters) {
  return async (c: Ctx) => {
    const body = await readBody(c);
    const account = await authenticate(c, body);
    const wait = await consumeAll([
      [limiters.perKey, String(account.id)],
      [limiters.perIp, clientIp(c)],
    ]);
    if (wait > 0) throw licenseError(c, 'rate_limited', { 'Retry-After': String(wait) });

    const presented = body.purchase_code ?? c.req.query('purchase_code');
    const input = validationBody.safeParse({ purchase_code: presented });
    if (!input.success) throw licenseError(c, typeof presented === 'string' && !isBlank(presented) ? 'malformed_purchase_code' : 'missing_purchase_code');
    const code = input.data.purchase_code;
    const { db, config } = c.var.services;
    const found = await findPurchase(db, config.codeEncryptionKey, account.id, code);
    if (!found) throw licenseError(c, 'invalid_purchase_code');
    return c.json({ status: 'success', data: { purchase: presentPurchase(code, found.purchase, found.item, asset(c)) } });
  };
}

/** Any other path under /license-api answers in the B envelope and the caller's language. */
export function unknownRoute(c: Ctx): never {
  throw licenseError(c, 'route_not_found');
}

/**
 * Re-words failures from shared layers (unreadable body, body limit) and unexpected errors in the
 * caller's language; the app's error handler then renders them in the B envelope.
 */
export const localizeFailure: ErrorHandler<AppEnv> = (err, c) => {
  const failure = asAppError(c, err);
  const condition = SHARED_FAILURES[failure.code];
  throw condition ? licenseError(c, condition, failure.headers) : failure;
};
