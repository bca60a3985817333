import { z } from '@hono/zod-openapi';
import { EXAMPLE_CURRENCY, EXAMPLE_TIMESTAMP, exampleAsset, examplePage } from '../../http/examples.js';
import { pageSchema } from '../../http/pagination.js';
import { id, keyOf, pageQuery, requiredText } from '../../http/validation.js';
import { DEMO_CAMPAIGN, DEMO_CATEGORIES, DEMO_TOP_UPS, demoGateways } from '../../demo/catalog.js';
import {
  cardServiceExample,
  DEMO_KINDS,
  demoRatings,
  exampleService,
  extendedServiceExample,
  pubg,
  pubgCampaignService,
  pubgFields,
  pubgListItem,
  pubgServices,
  steam,
  steamCard,
  topUpServiceExample,
  type DemoKind,
} from './examples.js';

/** A3 GET top-up/list */
export const topUpListQuery = z.object({
  category_id: keyOf('top-up category', id()).optional(),
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
});

/** A4 GET top-up/details */
export const topUpDetailsQuery = z.object({ slug: requiredText(160).openapi({ example: DEMO_TOP_UPS[0]!.slug }) });

/** A5 GET topup/services */
export const topUpServicesQuery = z.object({ top_up_id: keyOf('top-up', id()).optional().openapi({ example: 1 }) });

/** A9 GET get-card */
export const cardListQuery = z.object({ category_id: keyOf('card category', id()).optional() });

/** A10 GET card/details */
export const cardDetailsQuery = z.object({ card_id: keyOf('card', id()).openapi({ example: 1 }) });

/** A11 GET card/services */
export const cardServicesQuery = z.object({ card_id: keyOf('card', id()).optional().openapi({ example: 1 }) });

// ───────────────────────────── responses (spec §2) ─────────────────────────────
// Each response schema carries an example (examples.ts): the demo store in a fresh installation.

const timestamp = z.string().openapi({ example: EXAMPLE_TIMESTAMP });
const money = z.number().openapi({ example: 9.99 });
const pricing = z.object({
  price: z.string(),
  discount: z.string(),
  discount_type: z.enum(['percentage', 'flat']),
  max_sell: z.string().optional(),
});

export const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    icon: z.string(),
    type: z.enum(['top_up', 'card']),
    active_children: z.number().int(),
  })
  .openapi('Category', {
    example: {
      id: 1,
      name: DEMO_CATEGORIES[0]!.name,
      icon: DEMO_CATEGORIES[0]!.icon,
      type: DEMO_CATEGORIES[0]!.type,
      active_children: DEMO_TOP_UPS.filter((t) => t.category === DEMO_CATEGORIES[0]!.key).length,
    },
  });

const serviceFields = {
  id: z.number().int(),
  name: z.string(),
  image: z.string(),
  image_driver: z.string(),
  price: money,
  discount: money,
  discount_type: z.enum(['percentage', 'flat']),
  status: z.number().int(),
  is_offered: z.number().int(),
  offered_sell: z.number().int(),
  max_sell: z.number().int(),
  sort_by: z.number().int(),
  old_data: pricing.nullable(),
  campaign_data: pricing.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  image_path: z.string(),
};

export const TopUpService = z
  .object({ ...serviceFields, top_up_id: z.number().int() })
  .openapi('TopUpService', { example: topUpServiceExample(0, pubgCampaignService) });
export const CardService = z.object({ ...serviceFields, card_id: z.number().int() }).openapi('CardService', { example: cardServiceExample(0, 1) });

/** The top-up details' service (C6): in the caller's currency, with the discount worked out. */
export const ExtendedTopUpService = TopUpService.extend({
  currency: z.string(),
  currency_symbol: z.string(),
  discountedAmount: money,
  discountedPriceWithoutDiscount: money,
}).openapi('ExtendedTopUpService', { example: extendedServiceExample(pubgCampaignService) });

const OrderField = z.object({
  field_value: z.string(),
  field_name: z.string(),
  field_placeholder: z.string(),
  field_note: z.string(),
  field_type: z.enum(['text', 'select']),
  option: z.record(z.string(), z.string()).optional(),
  pattern: z.string().optional().openapi({ description: 'A regular expression the whole value must match (C27)' }),
});

const topUpFields = {
  id: z.number().int(),
  category_id: z.number().int(),
  name: z.string(),
  slug: z.string(),
  region: z.string(),
  note: z.string().nullable(),
  status: z.number().int(),
  instant_delivery: z.number().int(),
  image: z.object({ image: z.string(), image_driver: z.string(), preview: z.string(), preview_driver: z.string() }),
  preview_image: z.string(),
  description: z.string(),
  guide: z.string(),
  total_review: z.number().int(),
  avg_rating: z.number(),
  sort_by: z.number().int(),
  deleted_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  top_up_detail_route: z.string(),
};

/** A3: order fields keyed by 1-based position. */
export const TopUpListItem = z
  .object({ ...topUpFields, order_information: z.record(z.string(), OrderField), services: z.array(TopUpService) })
  .openapi('TopUpListItem', { example: pubgListItem });

/** A3's page of top-ups. */
export const TopUpListPage = pageSchema('items', TopUpListItem).openapi({ example: examplePage('/api/top-up/list', 'items', [pubgListItem]) });

/** A4: order fields as an array, extended active services. */
export const TopUpDetails = z
  .object({ ...topUpFields, order_information: z.array(OrderField), active_services: z.array(ExtendedTopUpService) })
  .openapi('TopUpDetails', {
    example: { ...pubgFields, order_information: pubg!.orderFields, active_services: pubgServices.map(extendedServiceExample) },
  });

export const Card = z
  .object({
    id: z.number().int(),
    category_id: z.number().int(),
    name: z.string(),
    slug: z.string(),
    status: z.number().int(),
    product_image: z.string(),
    preview_image: z.string(),
  })
  .openapi('Card', { example: steamCard });

export const CardDetails = Card.extend({
  region: z.string(),
  note: z.string().nullable(),
  instant_delivery: z.number().int(),
  description: z.string(),
  guide: z.string(),
  total_review: z.number().int(),
  avg_rating: z.number(),
  sell_count: z.number().int(),
  trending: z.number().int(),
  sort_by: z.number().int(),
  created_at: timestamp,
  updated_at: timestamp,
}).openapi('CardDetails', {
  example: {
    ...steamCard,
    region: steam!.region,
    note: null,
    instant_delivery: 1,
    description: steam!.description,
    guide: steam!.guide,
    ...demoRatings(steam!),
    sell_count: 0,
    trending: 1,
    sort_by: 1,
    created_at: EXAMPLE_TIMESTAMP,
    updated_at: EXAMPLE_TIMESTAMP,
  },
});

/** The demo's first gateway (account balance), with the column defaults the seed leaves to the database. */
function gatewayExample() {
  const gateway = demoGateways(EXAMPLE_CURRENCY.currency, EXAMPLE_CURRENCY.symbol)[0]!;
  return {
    id: 1,
    code: gateway.code,
    name: gateway.name,
    sort_by: gateway.sortBy ?? 0,
    image: exampleAsset(gateway.image ?? ''),
    driver: 'local',
    status: 1,
    parameters: gateway.parameters ?? {},
    currencies: gateway.currencies ?? {},
    extra_parameters: null,
    supported_currency: gateway.supportedCurrency ?? [],
    receivable_currencies: gateway.receivableCurrencies ?? [],
    description: gateway.description ?? '',
    currency_type: gateway.currencyType ?? 1,
    is_sandbox: gateway.isSandbox ?? 0,
    environment: gateway.environment ?? 'live',
    is_manual: gateway.isManual ?? null,
    note: gateway.note ?? null,
    created_at: EXAMPLE_TIMESTAMP,
    updated_at: EXAMPLE_TIMESTAMP,
  };
}

export const Gateway = z
  .object({
    id: z.number().int(),
    code: z.string(),
    name: z.string(),
    sort_by: z.number().int(),
    image: z.string(),
    driver: z.string(),
    status: z.number().int(),
    parameters: z.record(z.string(), z.string()),
    currencies: z.record(z.string(), z.record(z.string(), z.string())),
    extra_parameters: z.record(z.string(), z.string()).nullable(),
    supported_currency: z.array(z.string()),
    receivable_currencies: z.array(z.record(z.string(), z.string())),
    description: z.string(),
    currency_type: z.number().int(),
    is_sandbox: z.number().int(),
    environment: z.string(),
    is_manual: z.number().int().nullable(),
    note: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Gateway', { example: gatewayExample() });

/** A service as listed in a campaign: no image, is_offered or sort_by. */
const campaignService = <T extends z.ZodObject>(service: T) => service.omit({ image: true, image_driver: true, is_offered: true, sort_by: true });

/** The demo services in the demo campaign, as a campaign lists them. */
function campaignMembers<T extends ReturnType<typeof exampleService>>(kind: DemoKind, example: (p: number, n: number) => T) {
  return kind.products.flatMap((product, p) =>
    product.services.flatMap((s, i) => {
      if (!s.campaign) return [];
      const { image: _image, image_driver: _driver, is_offered: _offered, sort_by: _sort, ...member } = example(p, i + 1);
      return [member];
    }),
  );
}

export const Campaign = z
  .object({
    id: z.number().int(),
    name: z.string(),
    start_date: z.string().openapi({ example: '2026-11-20' }),
    end_date: z.string().openapi({ example: '2026-11-30' }),
    status: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
    topups: z.array(campaignService(TopUpService)),
    cards: z.array(campaignService(CardService)),
  })
  .openapi('Campaign', {
    example: {
      id: 1,
      name: DEMO_CAMPAIGN.name,
      start_date: '2026-11-20',
      end_date: '2026-12-03',
      status: 1,
      created_at: EXAMPLE_TIMESTAMP,
      updated_at: EXAMPLE_TIMESTAMP,
      topups: campaignMembers(DEMO_KINDS.top_up, topUpServiceExample),
      cards: campaignMembers(DEMO_KINDS.card, cardServiceExample),
    },
  });
