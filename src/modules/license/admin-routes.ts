import { z } from '@hono/zod-openapi';
import { notFound } from '../../core/errors.js';
import { ADMIN, contractRouter, endpoint } from '../../http/contract.js';
import { rotateApiKey } from '../accounts/service.js';
import { accountIdParam, createItemBody, createPurchaseBody } from './schemas.js';
import { issueItem, issuePurchase } from './service.js';

const IssuedItem = z
  .object({ id: z.number().int(), account_id: z.number().int(), name: z.string(), media_kind: z.enum(['image', 'audio', 'video']), published_at: z.string() })
  .openapi('IssuedItem');

const IssuedPurchase = z
  .object({
    id: z.number().int(),
    item_id: z.number().int(),
    purchase_code: z.string().openapi({ description: 'Shown this once' }),
    license_type: z.string(),
    price: z.number(),
    currency: z.string(),
    supported_until: z.string().nullable(),
    downloaded: z.boolean(),
  })
  .openapi('IssuedPurchase');

const RotatedKey = z.object({ id: z.number().int(), apiKey: z.string().openapi({ description: 'Shown this once' }) }).openapi('RotatedKey');

/** Operator endpoints for Interface B data, mounted inside the admin router (which applies the admin-token guard). */
export function licenseAdminRoutes() {
  const router = contractRouter();
  const common = { tag: 'Admin: license', guard: ADMIN };

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/license/items', summary: 'Create a license item for an account', jsonBody: createItemBody, ok: IssuedItem }),
    async (c) => {
      const { db, config } = c.get('services');
      return c.json({ status: 'success' as const, message: await issueItem(db, config.STORE_CURRENCY, c.req.valid('json')) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/license/purchases',
      summary: 'Record a purchase of a license item; returns its purchase code once',
      jsonBody: createPurchaseBody,
      ok: IssuedPurchase,
    }),
    async (c) => {
      const { db, config } = c.get('services');
      return c.json({ status: 'success' as const, message: await issuePurchase(db, config.codeEncryptionKey, c.req.valid('json')) }, 200);
    },
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/accounts/:id/api-key',
      summary: "Issue or rotate an account's api key; the old one stops working at once",
      params: accountIdParam,
      ok: RotatedKey,
      errors: [404],
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const apiKey = await rotateApiKey(c.get('services').db, id);
      if (!apiKey) throw notFound('account', 'id', id);
      return c.json({ status: 'success' as const, message: { id, apiKey } }, 200);
    },
  );
  return router;
}
