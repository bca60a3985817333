import type { z } from '@hono/zod-openapi';
import { jsonBody, readAll } from '../../cli/input.js';
import type { CliArg, CliCommand, CliIo, CliOption } from '../../cli/types.js';
import type { Config } from '../../core/env.js';
import { assetUrlsUnder } from '../../http/urls.js';
import { validate } from '../../http/validation.js';
import type { Services } from '../../runtime/services.js';
import { presentCardDetails, presentCategory, presentGateway, type Urls } from '../catalog/presenters.js';
import { createCampaign, endCampaign, updateCampaign } from './campaigns.js';
import { presentCardService, presentCurrency, presentStoreCampaign, presentStoreService, presentStoreTopUp, presentTier } from './presenters.js';
import { listCurrencies, listTiers } from '../prices/service.js';
import {
  CampaignBody,
  CampaignPatch,
  CardBody,
  CardPatch,
  CardServiceBody,
  CardServicePatch,
  CategoryBody,
  CategoryPatch,
  CurrencyBody,
  CurrencyParam,
  TierBody,
  TierPatch,
  TierPricesBody,
  GatewayBody,
  GatewayPatch,
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

const BODY: CliOption[] = [
  { name: 'json', value: '<body>', description: 'the body, as the admin API takes it' },
  { name: 'file', value: '<path>', description: 'a file holding the body (- reads stdin)' },
];

/** The body of `--json` or `--file` (an object, or a `list`), checked by the API's own schema (same refusals, same messages). */
async function body<S extends z.ZodType>(schema: S, { json, file }: Record<string, string | true>, io: CliIo, shape: 'object' | 'list'): Promise<z.output<S>> {
  if ((json === undefined) === (file === undefined)) throw new Error('Give the body with either --json <body> or --file <path>.');
  return validate(schema, jsonBody(typeof json === 'string' ? json : await readAll(io, 'file', String(file)), shape));
}

/** URLs as the API shows them to a client of PUBLIC_BASE_URL (else the local server); assets as configured. */
function urlsOf(config: Config): Urls {
  const base = (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
  return { base, asset: assetUrlsUnder(config.ASSET_BASE_URL, base) };
}

const id = (name: string, description: string): CliArg => ({ name, description, kind: 'id' });
const CATEGORY = id('categoryId', 'id of the category');
const TOP_UP = id('topUpId', 'id of the top-up');
const TOP_UP_SERVICE = id('topUpServiceId', 'id of the top-up service');
const CARD = id('cardId', 'id of the card');
const CARD_SERVICE = id('cardServiceId', 'id of the card service');
const GATEWAY = id('gatewayId', 'id of the gateway');
const CAMPAIGN = id('campaignId', 'id of the campaign');
const TIER = id('tierId', 'id of the price tier');

/** A command taking a JSON body (and the ids of `args`), printing the resource as the admin API answers it. */
function withBody<S extends z.ZodType>(
  description: string,
  schema: S,
  args: CliArg[],
  run: (services: Services, ids: number[], input: z.output<S>, urls: Urls) => Promise<unknown>,
  shape: 'object' | 'list' = 'object',
): CliCommand {
  return {
    description,
    args,
    options: BODY,
    run: async (services, given, options, io) => run(services, given.map(Number), await body(schema, options, io, shape), urlsOf(services.config)),
  };
}

/** Store management (C19): the admin API's store endpoints, one command each. */
export const catalogAdminCommands: Record<string, CliCommand> = {
  'store:categories:create': withBody('Create a category', CategoryBody, [], async (s, _ids, input) => presentCategory(await createCategory(s, input))),
  'store:categories:update': withBody('Change a category; status 0 takes it and its products out of the catalog', CategoryPatch, [CATEGORY], async (s, [categoryId], input) =>
    presentCategory(await updateCategory(s, categoryId!, input)),
  ),
  'store:top-ups:create': withBody('Create a top-up with its order form', TopUpBody, [], async (s, _ids, input, urls) =>
    presentStoreTopUp(await createProduct(s, 'top_up', input), urls),
  ),
  'store:top-ups:update': withBody('Change a top-up; status 0 takes it out of the catalog', TopUpPatch, [TOP_UP], async (s, [topUpId], input, urls) =>
    presentStoreTopUp(await updateProduct(s, 'top_up', topUpId!, input), urls),
  ),
  'store:top-up-services:create': withBody('Add a service to a top-up', TopUpServiceBody, [TOP_UP], async (s, [topUpId], input, urls) =>
    presentStoreService(await createService(s, 'top_up', topUpId!, input), urls),
  ),
  'store:top-up-services:update': withBody('Change a top-up service', TopUpServicePatch, [TOP_UP_SERVICE], async (s, [serviceId], input, urls) =>
    presentStoreService(await updateService(s, 'top_up', serviceId!, input), urls),
  ),
  'store:cards:create': withBody('Create a card', CardBody, [], async (s, _ids, input, urls) => presentCardDetails(await createProduct(s, 'card', input), urls)),
  'store:cards:update': withBody('Change a card; status 0 takes it out of the catalog', CardPatch, [CARD], async (s, [cardId], input, urls) =>
    presentCardDetails(await updateProduct(s, 'card', cardId!, input), urls),
  ),
  'store:card-services:create': withBody('Add a service to a card', CardServiceBody, [CARD], async (s, [cardId], input, urls) =>
    presentCardService(await createService(s, 'card', cardId!, input), urls),
  ),
  'store:card-services:update': withBody('Change a card service', CardServicePatch, [CARD_SERVICE], async (s, [serviceId], input, urls) =>
    presentCardService(await updateService(s, 'card', serviceId!, input), urls),
  ),
  'store:gateways:create': withBody('Create a payment gateway', GatewayBody, [], async (s, _ids, input, urls) => presentGateway(await createGateway(s, input), urls)),
  'store:gateways:update': withBody('Change a payment gateway', GatewayPatch, [GATEWAY], async (s, [gatewayId], input, urls) =>
    presentGateway(await updateGateway(s, gatewayId!, input), urls),
  ),
  'store:campaigns:create': withBody('Create a campaign; when its dates include today it takes effect at once', CampaignBody, [], async (s, _ids, input, urls) =>
    presentStoreCampaign(await createCampaign(s, input), urls),
  ),
  'store:campaigns:update': withBody('Change a campaign: dates, status, services added or repriced', CampaignPatch, [CAMPAIGN], async (s, [campaignId], input, urls) =>
    presentStoreCampaign(await updateCampaign(s, campaignId!, input), urls),
  ),
  'store:campaigns:end': {
    description: 'End a campaign now: its services go back to their own pricing',
    args: [CAMPAIGN],
    run: async (s, [campaignId]) => presentStoreCampaign(await endCampaign(s, Number(campaignId)), urlsOf(s.config)),
  },
  'store:price-tiers:create': withBody('Create a price tier: a percent off the catalog price', TierBody, [], async (s, _ids, input) => presentTier(await createPriceTier(s, input))),
  'store:price-tiers:update': withBody('Change a price tier: its accounts pay its new prices at once', TierPatch, [TIER], async (s, [tierId], input) =>
    presentTier(await updatePriceTier(s, tierId!, input)),
  ),
  'store:price-tiers:prices': withBody(
    "Replace a tier's own prices: a list of {kind, service_id, price} in the store currency",
    TierPricesBody,
    [TIER],
    async (s, [tierId], input) => presentTier(await replaceTierPrices(s, tierId!, input)),
    'list',
  ),
  'store:price-tiers:list': { description: 'Every price tier with its own prices', run: async (s) => (await listTiers(s.db)).map(presentTier) },
  'store:currencies:set': {
    description: 'Set the rate (units per 1 store-currency unit) and symbol of a currency: new orders are converted at it',
    args: [{ name: 'code', description: 'the 3-letter currency code' }],
    options: [
      { name: 'rate', value: '<rate>', description: 'units of the currency per 1 unit of the store currency', required: true },
      { name: 'symbol', value: '<symbol>', description: 'the currency symbol', required: true },
    ],
    run: async (s, [code], options) => {
      const { code: checked } = validate(CurrencyParam, { code }, 'path');
      return presentCurrency(await putCurrency(s, checked, validate(CurrencyBody, options)));
    },
  },
  'store:currencies:list': { description: 'The store currency and every currency with its rate', run: async (s) => (await listCurrencies(s.db, s.config)).map(presentCurrency) },
};
