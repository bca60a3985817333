import { z, type Hook } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { clientIp } from '../../http/client-ip.js';
import type { AppEnv } from '../../http/context.js';
import { API_KEY, contractRouter, endpoint, validBody } from '../../http/contract.js';
import { assetUrls } from '../../http/urls.js';
import { validationFailure } from '../../http/validation.js';
import { consumeAll } from '../../lib/rate-limit.js';
import { isBlank } from '../../lib/text.js';
import type { Services } from '../../runtime/services.js';
import { bearerToken } from '../auth/middleware.js';
import { licenseError } from './messages.js';
import { presentAccount, presentItem, presentPurchase } from './presenters.js';
import { apiKeyQuery, Item, itemQuery, LicenseAccount, Purchase, validationBody, validationQuery } from './schemas.js';
import { accountByApiKey, findItem, findPurchase, listItems, type LicenseAccount as Owner } from './service.js';

type Ctx = Context<AppEnv>;

/** The body's fields, whichever encoding it came in (read once; the validators reuse it). */
async function bodyFields(c: Ctx): Promise<Record<string, unknown>> {
  const type = (c.req.header('content-type') ?? '').toLowerCase();
  if (type.startsWith('application/json')) return (await c.req.json()) as Record<string, unknown>;
  if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/')) {
    return Object.fromEntries(await c.req.formData().then((form) => [...form.entries()]));
  }
  return {};
}

/**
 * C12: the key from `X-API-Key`, `Authorization: Bearer`, query `api_key` or body field `api_key`, in that
 * order. It is checked before any field, so a request without a valid key learns nothing more. An `Authorization`
 * header of another scheme (a proxy's Basic credentials) is not a key, so it never hides one sent elsewhere.
 */
const requireApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body = c.req.method === 'GET' ? {} : await bodyFields(c);
  const bearer = bearerToken(c.req.header('authorization'), { schemeRequired: true });
  const candidates = [c.req.header('x-api-key'), bearer, c.req.query('api_key'), body.api_key];
  const key = candidates.find((v): v is string => typeof v === 'string' && v.trim() !== '')?.trim().slice(0, 512);
  if (!key) throw licenseError(c, 'missing_api_key');
  const owner = await accountByApiKey(c.get('services').db, key);
  if (!owner) throw licenseError(c, 'invalid_api_key');
  c.set('licenseOwner', owner);
  await next();
};

const owner = (c: Ctx): Owner => c.get('licenseOwner')!;

const guard = { ...API_KEY, middleware: requireApiKey, credentialsInBody: true };

/**
 * Interface B's fields fail in its own words (C12): an `item_id` that is not an id, or one past the id range
 * (an item that cannot exist); a purchase code that is missing, or not storable text.
 */
const licenseValidation: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (result.success) return;
  const raw = ((result as { data?: unknown }).data ?? {}) as Record<string, unknown>;
  const fields = new Set(result.error.issues.map((issue) => String(issue.path[0])));
  if (fields.has('item_id')) {
    const failure = validationFailure(result.error.issues, raw, 'query');
    throw licenseError(c, failure.code === 'not_found' ? 'item_not_found' : 'invalid_item_id');
  }
  if (fields.has('purchase_code')) {
    throw licenseError(c, typeof raw.purchase_code === 'string' && !isBlank(raw.purchase_code) ? 'malformed_purchase_code' : 'missing_purchase_code');
  }
  throw licenseError(c, 'malformed_body');
};

const ok = <T extends z.ZodRawShape>(shape: T) => z.object({ status: z.literal('success'), ...shape });

/** Interface B (spec §4), mounted at /license-api. Failures: `{status: 'error', msg}` in English or Spanish. */
export function licenseRoutes({ limiter, config }: Services) {
  const router = contractRouter(licenseValidation);
  const tag = 'License API';
  const common = { tag, guard, envelope: 'whole', failuresIn: 'B' } as const;

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/account/details', summary: 'Details of the account that owns the api key', query: apiKeyQuery, ok: ok({ data: LicenseAccount }) }),
    (c) => c.json({ status: 'success' as const, data: presentAccount(owner(c), assetUrls(c)) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/items/all', summary: "The key owner's items", query: apiKeyQuery, ok: ok({ items: z.array(Item) }), errors: [404] }),
    async (c) => {
      const items = await listItems(c.get('services').db, owner(c).id);
      if (!items.length) throw licenseError(c, 'no_items_found');
      return c.json({ status: 'success' as const, items: items.map((item) => presentItem(item, assetUrls(c))) }, 200);
    },
  );

  router.openapi(
    endpoint({ ...common, method: 'get', path: '/items/item', summary: "One of the key owner's items", query: itemQuery, ok: ok({ item: Item }), errors: [404, 422] }),
    async (c) => {
      const item = await findItem(c.get('services').db, owner(c).id, c.req.valid('query').item_id);
      if (!item) throw licenseError(c, 'item_not_found');
      return c.json({ status: 'success' as const, item: presentItem(item, assetUrls(c)) }, 200);
    },
  );

  // Every validation counts against the key's owner and the client address, so codes cannot be guessed by volume.
  const prefix = `${config.BULLMQ_PREFIX}:license-validations`;
  const window = config.LICENSE_VALIDATION_WINDOW_SECONDS;
  const perKey = limiter(`${prefix}:key`, config.LICENSE_VALIDATIONS_PER_KEY, window);
  const perAddress = limiter(`${prefix}:ip`, config.LICENSE_VALIDATIONS_PER_IP, window);
  const limited: MiddlewareHandler<AppEnv> = async (c, next) => {
    const wait = await consumeAll([
      [perKey, String(owner(c).id)],
      [perAddress, clientIp(c)],
    ]);
    if (wait > 0) throw licenseError(c, 'rate_limited', { 'Retry-After': String(wait) });
    await next();
  };

  const validation = endpoint({
    ...common,
    use: [limited],
    method: 'post',
    path: '/purchases/validation',
    summary: "Validate a purchase code of one of the key owner's items",
    description: 'The code in the body (JSON or form) or in the query.',
    query: validationQuery,
    body: validationBody,
    ok: ok({ data: z.object({ purchase: Purchase }) }),
    errors: [404, 422, 429],
  });
  router.openapi(validation, async (c) => {
    const code = validBody(c, (target) => c.req.valid(target)).purchase_code ?? c.req.valid('query').purchase_code;
    if (code === undefined) throw licenseError(c, 'missing_purchase_code');
    const { db, config } = c.get('services');
    const found = await findPurchase(db, config.codeEncryptionKey, owner(c).id, code);
    if (!found) throw licenseError(c, 'invalid_purchase_code');
    return c.json({ status: 'success' as const, data: { purchase: presentPurchase(code, found.purchase, found.item, assetUrls(c)) } }, 200);
  });

  // Any other path or method under /license-api answers in the B envelope and the caller's language.
  router.all('*', (c) => {
    const allowed = c.get('allowedMethods')(c.req.path);
    if (allowed.length > 0) throw licenseError(c, 'method_not_allowed', { Allow: allowed.join(', ') });
    throw licenseError(c, 'route_not_found');
  });
  return router;
}

