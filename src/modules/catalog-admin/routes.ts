import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { adminOnly } from '../../http/admin-guard.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { assetUrls, baseUrl } from '../../http/urls.js';
import { idParam } from '../../http/validation.js';
import { presentCardDetails, presentCategory, presentGateway, type Urls } from '../catalog/presenters.js';
import { Campaign, CardDetails, Category, Gateway, TopUpListItem, TopUpService } from '../catalog/schemas.js';
import { createCampaign, endCampaign, updateCampaign } from './campaigns.js';
import { presentCardService, presentCurrency, presentStoreCampaign, presentStoreService, presentStoreTopUp, presentTier } from './presenters.js';
import { listCurrencies, listTiers, type Tier } from '../prices/service.js';
import {
  CampaignBody,
  CampaignPatch,
  CardBody,
  CardPatch,
  CardServiceBody,
  CardServicePatch,
  CategoryBody,
  Currency,
  CurrencyBody,
  CurrencyParam,
  TierBody,
  TierPatch,
  TierPricesBody,
  Tier as TierSchema,
  CategoryPatch,
  GatewayBody,
  GatewayPatch,
  StoreCardService,
  TopUpBody,
  TopUpPatch,
  TopUpServiceBody,
  TopUpServicePatch,
} from './schemas.js';
import {
  createCategory,
  createGateway,
  createPriceTier,
  createProduct,
  createService,
  putCurrency,
  replaceTierPrices,
  updateCategory,
  updateGateway,
  updatePriceTier,
  updateProduct,
  updateService,
} from './service.js';

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
      c.json({ status: 'success' as const, message: presentStoreTopUp(await createProduct(c.get('services'), 'top_up', c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({ ...changed('top-up'), path: '/top-ups/:id', summary: 'Change a top-up; status 0 takes it out of the catalog', jsonBody: TopUpPatch, ok: TopUpListItem }),
    async (c) =>
      c.json(
        { status: 'success' as const, message: presentStoreTopUp(await updateProduct(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) },
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
      c.json({ status: 'success' as const, message: presentStoreService(await createService(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
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
      c.json({ status: 'success' as const, message: presentStoreService(await updateService(c.get('services'), 'top_up', c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
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
    async (c) => c.json({ status: 'success' as const, message: presentStoreCampaign(await createCampaign(c.get('services'), c.req.valid('json')), urlsFor(c)) }, 200),
  );
  router.openapi(
    endpoint({
      ...changed('campaign'),
      path: '/campaigns/:id',
      summary: 'Change a campaign: dates, status, and services added or repriced (units sold so far are kept)',
      jsonBody: CampaignPatch,
      ok: Campaign,
    }),
    async (c) => c.json({ status: 'success' as const, message: presentStoreCampaign(await updateCampaign(c.get('services'), c.req.valid('param').id, c.req.valid('json')), urlsFor(c)) }, 200),
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
    async (c) => c.json({ status: 'success' as const, message: presentStoreCampaign(await endCampaign(c.get('services'), c.req.valid('param').id), urlsFor(c)) }, 200),
  );

  priceRoutes(router, { ...common, tag: 'Admin: prices' });
  return router;
}

/** C24: price tiers and the currencies accounts may be in, for operators. */
function priceRoutes(router: ReturnType<typeof contractRouter>, common: { tag: string; guard: typeof adminOnly }) {
  const tier = (c: Ctx, found: Promise<Tier>) => found.then((t) => c.json({ status: 'success' as const, message: presentTier(t) }, 200));
  router.openapi(
    endpoint({ ...common, method: 'post', path: '/price-tiers', summary: 'Create a price tier: a percent off the catalog price', jsonBody: TierBody, ok: TierSchema }),
    (c) => tier(c, createPriceTier(c.get('services'), c.req.valid('json'))),
  );
  router.openapi(endpoint({ ...common, method: 'get', path: '/price-tiers', summary: 'Every price tier with its own prices', ok: z.array(TierSchema) }), async (c) =>
    c.json({ status: 'success' as const, message: (await listTiers(c.get('services').db)).map(presentTier) }, 200),
  );
  router.openapi(
    endpoint({ ...common, method: 'patch', path: '/price-tiers/:id', summary: 'Change a tier: its accounts pay its new prices at once', params: idParam('price tier'), jsonBody: TierPatch, ok: TierSchema, errors: [404] }),
    (c) => tier(c, updatePriceTier(c.get('services'), c.req.valid('param').id, c.req.valid('json'))),
  );
  router.openapi(
    endpoint({
      ...common,
      method: 'put',
      path: '/price-tiers/:id/prices',
      summary: "Replace a tier's own prices (store currency), each taking the place of the catalog price less percent_off",
      params: idParam('price tier'),
      jsonBody: TierPricesBody,
      ok: TierSchema,
      errors: [404],
    }),
    (c) => tier(c, replaceTierPrices(c.get('services'), c.req.valid('param').id, c.req.valid('json'))),
  );
  router.openapi(
    endpoint({ ...common, method: 'get', path: '/currencies', summary: 'The store currency and every currency with its rate', ok: z.array(Currency) }),
    async (c) => {
      const { db, config } = c.get('services');
      return c.json({ status: 'success' as const, message: (await listCurrencies(db, config)).map(presentCurrency) }, 200);
    },
  );
  router.openapi(
    endpoint({
      ...common,
      method: 'put',
      path: '/currencies/:code',
      summary: 'Set the rate (units per 1 store-currency unit) and symbol of a currency: new orders are converted at it',
      params: CurrencyParam,
      jsonBody: CurrencyBody,
      ok: Currency,
      errors: [404],
    }),
    async (c) => c.json({ status: 'success' as const, message: presentCurrency(await putCurrency(c.get('services'), c.req.valid('param').code, c.req.valid('json'))) }, 200),
  );
}
