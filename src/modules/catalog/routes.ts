import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { route } from '../../http/route.js';
import {
  getCampaign,
  getCardDetails,
  getCards,
  getCardServices,
  getCategories,
  getTopUpDetails,
  getTopUpList,
  getTopUpServices,
} from './handlers.js';
import {
  cardDetailsQuery,
  cardListQuery,
  cardServicesQuery,
  topUpDetailsQuery,
  topUpListQuery,
  topUpServicesQuery,
} from './schemas.js';

export function catalogRoutes() {
  const router = new OpenAPIHono<AppEnv>();
  const doc = (method: 'get', path: string, summary: string, tags: string[]) =>
    ({ method, path, summary, tags, security: 'token' }) as const;

  route(router, doc('get', '/get-category', 'Active categories with their number of active products', ['Catalog']), getCategories);
  route(
    router,
    { ...doc('get', '/top-up/list', 'A page of top-ups with their active services', ['Top-ups']), query: topUpListQuery },
    getTopUpList,
  );
  route(
    router,
    { ...doc('get', '/top-up/details', 'One top-up by slug, with reviews and gateways', ['Top-ups']), query: topUpDetailsQuery },
    getTopUpDetails,
  );
  route(
    router,
    { ...doc('get', '/topup/services', 'Active top-up services', ['Top-ups']), query: topUpServicesQuery },
    getTopUpServices,
  );
  route(router, { ...doc('get', '/get-card', 'Active cards', ['Cards']), query: cardListQuery }, getCards);
  route(
    router,
    { ...doc('get', '/card/details', 'One card with its services and gateways', ['Cards']), query: cardDetailsQuery },
    getCardDetails,
  );
  route(
    router,
    { ...doc('get', '/card/services', 'Active card services', ['Cards']), query: cardServicesQuery },
    getCardServices,
  );
  route(router, doc('get', '/get-campaign', 'The running campaign, or null', ['Campaigns']), getCampaign);
  return router;
}
