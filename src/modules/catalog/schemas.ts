import { z } from '@hono/zod-openapi';
import { EXAMPLE_BASE_URL, EXAMPLE_CURRENCY, EXAMPLE_TIMESTAMP, exampleAsset, examplePage } from '../../http/examples.js';
import { pageSchema } from '../../http/pagination.js';
import { id, keyOf, pageQuery, requiredText } from '../../http/validation.js';
import { moneyNumber } from '../../lib/money.js';
import {
  DEMO_CAMPAIGN,
  DEMO_CARDS,
  DEMO_CATEGORIES,
  DEMO_REVIEWS,
  DEMO_TOP_UPS,
  demoGateways,
  type DemoProduct,
  type DemoService,
} from '../../seed/data/catalog.js';
import { discountFigures, toSnapshot } from './pricing.js';

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
// Each response schema carries an example: the demo store (src/seed/data/catalog.ts) in a fresh installation.

/** Each product kind's demo products, and how the demo seed names their pictures. */
export const DEMO_KINDS = {
  top_up: { products: DEMO_TOP_UPS, imageDir: 'topups', serviceDir: 'topup-services' },
  card: { products: DEMO_CARDS, imageDir: 'cards', serviceDir: 'card-services' },
} as const;
type DemoKind = (typeof DEMO_KINDS)[keyof typeof DEMO_KINDS];

/** The stored paths of a demo product's picture and preview. */
export const demoProductImages = (kind: DemoKind, product: DemoProduct) => ({
  image: `${kind.imageDir}/${product.slug}.webp`,
  preview: `${kind.imageDir}/${product.slug}-preview.webp`,
});

const categoryId = (product: DemoProduct) => DEMO_CATEGORIES.findIndex((c) => c.key === product.category) + 1;

/** Review count and average rating of a demo product, from the demo reviews. */
export function demoRatings(product: DemoProduct) {
  const ratings = DEMO_REVIEWS.filter(([, slug]) => slug === product.slug).map(([, , rating]) => rating);
  const sum = ratings.reduce((total, rating) => total + rating, 0);
  return { total_review: ratings.length, avg_rating: ratings.length ? Number((sum / ratings.length).toFixed(2)) : 0 };
}

/** A demo service's own pricing, and the pricing it sells at (its campaign's while it is in the campaign). */
export function demoPricing(s: DemoService) {
  const own = { price: s.price, discount: s.discount ?? '0.00', discountType: s.discountType ?? ('flat' as const) };
  return { own, current: s.campaign ?? own };
}

/** The demo service at position `n` (1-based) of product `p` (0-based): ids count the services of the products before it. */
function exampleService(kind: DemoKind, p: number, n: number) {
  const product = kind.products[p]!;
  const s = product.services[n - 1]!;
  const { own, current } = demoPricing(s);
  const image = `${kind.serviceDir}/${product.slug}-${n}.webp`;
  return {
    id: kind.products.slice(0, p).reduce((count, q) => count + q.services.length, 0) + n,
    name: s.name,
    image,
    image_driver: 'local',
    price: moneyNumber(current.price),
    discount: moneyNumber(current.discount),
    discount_type: current.discountType,
    status: s.status ?? 1,
    is_offered: s.campaign ? 1 : 0,
    offered_sell: 0,
    max_sell: s.campaign?.maxSell ?? 0,
    sort_by: n,
    old_data: s.campaign ? toSnapshot(own) : null,
    campaign_data: s.campaign ? toSnapshot(s.campaign, s.campaign.maxSell) : null,
    created_at: EXAMPLE_TIMESTAMP,
    updated_at: EXAMPLE_TIMESTAMP,
    image_path: exampleAsset(image),
  };
}

const topUpServiceExample = (p: number, n: number) => ({ ...exampleService(DEMO_KINDS.top_up, p, n), top_up_id: p + 1 });
const cardServiceExample = (p: number, n: number) => ({ ...exampleService(DEMO_KINDS.card, p, n), card_id: p + 1 });

const [pubg] = DEMO_TOP_UPS;

/** The C6 extended service of the top-up details: in the account currency, with the discount worked out. */
const extendedServiceExample = (n: number) => ({
  ...topUpServiceExample(0, n),
  currency: EXAMPLE_CURRENCY.currency,
  currency_symbol: EXAMPLE_CURRENCY.symbol,
  ...discountFigures(demoPricing(pubg!.services[n - 1]!).current),
});

const pubgImage = demoProductImages(DEMO_KINDS.top_up, pubg!);
const pubgFields = {
  id: 1,
  category_id: categoryId(pubg!),
  name: pubg!.name,
  slug: pubg!.slug,
  region: pubg!.region,
  note: null,
  status: 1,
  instant_delivery: 1,
  image: { image: pubgImage.image, image_driver: 'local', preview: pubgImage.preview, preview_driver: 'local' },
  preview_image: exampleAsset(pubgImage.preview),
  description: pubg!.description,
  guide: pubg!.guide,
  ...demoRatings(pubg!),
  sort_by: 1,
  deleted_at: null,
  created_at: EXAMPLE_TIMESTAMP,
  updated_at: EXAMPLE_TIMESTAMP,
  top_up_detail_route: `${EXAMPLE_BASE_URL}/api/top-up/details?slug=${pubg!.slug}`,
};
const pubgServices = pubg!.services.map((_, i) => i + 1);
const pubgListItem = {
  ...pubgFields,
  order_information: Object.fromEntries(pubg!.orderFields.map((field, i) => [String(i + 1), field])),
  services: pubgServices.map((n) => topUpServiceExample(0, n)),
};
/** The campaign member of the first demo top-up: old_data and campaign_data filled in. */
const pubgCampaignService = pubg!.services.findIndex((s) => s.campaign) + 1;

const [steam] = DEMO_CARDS;
const steamImage = demoProductImages(DEMO_KINDS.card, steam!);
const steamCard = {
  id: 1,
  category_id: categoryId(steam!),
  name: steam!.name,
  slug: steam!.slug,
  status: 1,
  product_image: exampleAsset(steamImage.image),
  preview_image: exampleAsset(steamImage.preview),
};

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
