import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { route } from '../../http/route.js';
import { createItemHandler, createPurchaseHandler, rotateApiKeyHandler } from './admin-handlers.js';
import { createItemBody, createPurchaseBody } from './schemas.js';

const tags = ['Admin: license'];

/** Operator endpoints for Interface B data, mounted inside the admin router (which applies the admin-token guard). */
export function licenseAdminRoutes() {
  const router = new OpenAPIHono<AppEnv>();
  route(
    router,
    { method: 'post', path: '/license/items', summary: 'Create a license item for an account', tags, body: createItemBody, security: 'admin' },
    createItemHandler,
  );
  route(
    router,
    {
      method: 'post',
      path: '/license/purchases',
      summary: 'Record a purchase of a license item; returns its purchase code once',
      tags,
      body: createPurchaseBody,
      security: 'admin',
    },
    createPurchaseHandler,
  );
  route(
    router,
    { method: 'post', path: '/accounts/:id/api-key', summary: "Rotate an account's api key; returns the new key once", tags, security: 'admin' },
    rotateApiKeyHandler,
  );
  return router;
}
