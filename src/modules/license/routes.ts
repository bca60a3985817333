import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import type { Services } from '../../services.js';
import { route } from '../../http/route.js';
import {
  accountDetails,
  allItems,
  createValidationLimiters,
  localizeFailure,
  oneItem,
  unknownRoute,
  validatePurchase,
} from './handlers.js';
import { apiKeyQuery, itemQuery, validationBody } from './schemas.js';

const tags = ['License API'];

/** Interface B (spec §4), mounted at /license-api. Failures: `{status: 'error', msg}` in English or Spanish. */
export function licenseRoutes(services: Services) {
  const router = new OpenAPIHono<AppEnv>();
  router.onError(localizeFailure);
  route(
    router,
    { method: 'get', path: '/account/details', summary: 'Details of the account that owns the api key', tags, query: apiKeyQuery, security: 'apiKey' },
    accountDetails,
  );
  route(
    router,
    { method: 'get', path: '/items/all', summary: "The key owner's items", tags, query: apiKeyQuery, security: 'apiKey' },
    allItems,
  );
  route(
    router,
    { method: 'get', path: '/items/item', summary: "One of the key owner's items", tags, query: itemQuery, security: 'apiKey' },
    oneItem,
  );
  route(
    router,
    {
      method: 'post',
      path: '/purchases/validation',
      summary: "Validate a purchase code of one of the key owner's items",
      tags,
      body: validationBody,
      security: 'apiKey',
    },
    validatePurchase(createValidationLimiters(services)),
  );
  router.all('*', unknownRoute);
  return router;
}
