import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { adminOnly } from '../../http/admin-guard.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { assetUrls, baseUrl } from '../../http/urls.js';
import { idParam } from '../../http/validation.js';
import { presentCampaign, presentCardDetails, presentCategory, presentGateway, presentService, presentTopUpListItem, type Urls } from '../catalog/presenters.js';
import { Campaign, CardDetails, Category, Gateway, TopUpListItem, TopUpService } from '../catalog/schemas.js';
import { createCampaign, endCampaign, updateCampaign } from './campaigns.js';
import { presentCardService } from './presenters.js';
import {
  CampaignBody,
  CampaignPatch,
  CardBody,
  CardPatch,
  CardServiceBody,
  CardServicePatch,
  CategoryBody,
  CategoryPatch,
  GatewayBody,
  GatewayPatch,
  StoreCardService,
  TopUpBody,
  TopUpPatch,
  TopUpServiceBody,
  TopUpServicePatch,
} from './schemas.js';
import { createCategory, createGateway, createProduct, createService, updateCategory, updateGateway, updateProduct, updateService } from './service.js';

type Ctx = Context<AppEnv>;

const urlsFor = (c: Ctx): Urls => ({ asset: assetUrls(c), base: baseUrl(c) });

/**
 * C19 store management, mounted at /admin after the admin router (whose requireAdmin guards every /admin route).
 * `message` is the created or changed resource as the catalog shows it.
 */
export function catalogAdminRoutes() {
  const router = contractRouter();
  const common = { tag: 'Admin: store', guard: adminOnly };
  const changed = (what: string) => ({ ...common, method: 'patch' as const, params: idParam(what), errors: [404 as const] });

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/categories', summary: 'Create a category', jsonBody: CategoryBody, ok: Category }),
    async (c) => c.json({ status: 'success' as const, message: presentCategory(await createCategory(c.get('services'), c.req.valid('json'))) }, 200),
  );
  router.openapi(
    endpoint({
      ...changed('category'),
      path: '/categories/:id',
      summary: 'Change a category; status 0 takes it and its products out of the catalog',
      jsonBody: CategoryPatch,
      ok: Category,
      errors: [404, 409],
    }),
    async (c) => c.json({ status: 'success' as const, message: presentCategory(await updateCategory(c.get('services'), c.req.valid('param').id, c.req.valid('json'))) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/top-ups', summary: 'Create a top-up with its order form', jsonBody: TopUpBody, ok: TopUpListItem }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentTopUpListItem(await createProduct(c.get('services'), 'top_up', c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({ ...changed('top-up'), path: '/top-ups/:id', summary: 'Change a top-up; status 0 takes it out of the catalog', jsonBody: TopUpPatch, ok: TopUpListItem }),
    async (c) =>
      c.json(
        { status: 'success' as const, message: presentTopUpListItem(await updateProduct(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) },
        200,
      ),
  );
  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/top-ups/:id/services',
      summary: 'Add a service to a top-up',
      params: idParam('top-up'),
      jsonBody: TopUpServiceBody,
      ok: TopUpService,
      errors: [404],
    }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentService(await createService(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...changed('top-up service'),
      path: '/top-up-services/:id',
      summary: 'Change a top-up service (in a campaign: its own pricing, kept for when the campaign ends)',
      jsonBody: TopUpServicePatch,
      ok: TopUpService,
    }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentService(await updateService(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/cards', summary: 'Create a card', jsonBody: CardBody, ok: CardDetails }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentCardDetails(await createProduct(c.get('services'), 'card', c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({ ...changed('card'), path: '/cards/:id', summary: 'Change a card; status 0 takes it out of the catalog', jsonBody: CardPatch, ok: CardDetails }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentCardDetails(await updateProduct(c.get('services'), 'card', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/cards/:id/services',
      summary: 'Add a service to a card',
      params: idParam('card'),
      jsonBody: CardServiceBody,
      ok: StoreCardService,
      errors: [404],
    }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentCardService(await createService(c.get('services'), 'card', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...changed('card service'),
      path: '/card-services/:id',
      summary: 'Change a card service (in a campaign: its own pricing, kept for when the campaign ends)',
      jsonBody: CardServicePatch,
      ok: StoreCardService,
    }),
    async (c) =>
      c.json({ status: 'success' as const, message: presentCardService(await updateService(c.get('services'), 'card', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );

  router.openapi(
    endpoint({ ...common, method: 'post', path: '/gateways', summary: 'Create a payment gateway (shown in top-up and card details)', jsonBody: GatewayBody, ok: Gateway }),
    async (c) => c.json({ status: 'success' as const, message: presentGateway(await createGateway(c.get('services'), c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({ ...changed('gateway'), path: '/gateways/:id', summary: 'Change a payment gateway', jsonBody: GatewayPatch, ok: Gateway }),
    async (c) => c.json({ status: 'success' as const, message: presentGateway(await updateGateway(c.get('services'), c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );

  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/campaigns',
      summary: 'Create a campaign; when its dates include today it takes effect at once',
      jsonBody: CampaignBody,
      ok: Campaign,
    }),
    async (c) => c.json({ status: 'success' as const, message: presentCampaign(await createCampaign(c.get('services'), c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...changed('campaign'),
      path: '/campaigns/:id',
      summary: 'Change a campaign: dates, status, and services added or repriced (units sold so far are kept)',
      jsonBody: CampaignPatch,
      ok: Campaign,
    }),
    async (c) => c.json({ status: 'success' as const, message: presentCampaign(await updateCampaign(c.get('services'), c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...common,
      method: 'post',
      path: '/campaigns/:id/end',
      summary: 'End a campaign now: its services go back to the pricing kept in old_data',
      params: idParam('campaign'),
      ok: Campaign,
      errors: [404],
    }),
    async (c) => c.json({ status: 'success' as const, message: presentCampaign(await endCampaign(c.get('services'), c.req.valid('param').id), urlsFor(c)) }, 200),
  );

  return router;
}
