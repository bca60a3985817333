/**
 * The examples of the catalog's OpenAPI document, built from the demo store (src/demo/catalog.ts) as a fresh
 * installation serves it; the orders' examples reuse them.
 */
import { EXAMPLE_BASE_URL, EXAMPLE_CURRENCY, EXAMPLE_TIMESTAMP, exampleAsset } from '../../http/examples.js';
import { moneyNumber } from '../../lib/money.js';
import {
  DEMO_CARDS,
  DEMO_CATEGORIES,
  DEMO_REVIEWS,
  DEMO_TOP_UPS,
  type DemoProduct,
  type DemoService,
} from '../../demo/catalog.js';
import { discountFigures, toSnapshot } from '../campaigns/pricing.js';

/** Each product kind's demo products, and how the demo seed names their pictures. */
export const DEMO_KINDS = {
  top_up: { products: DEMO_TOP_UPS, imageDir: 'topups', serviceDir: 'topup-services' },
  card: { products: DEMO_CARDS, imageDir: 'cards', serviceDir: 'card-services' },
} as const;
export type DemoKind = (typeof DEMO_KINDS)[keyof typeof DEMO_KINDS];

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
export function exampleService(kind: DemoKind, p: number, n: number) {
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

export const topUpServiceExample = (p: number, n: number) => ({ ...exampleService(DEMO_KINDS.top_up, p, n), top_up_id: p + 1 });
export const cardServiceExample = (p: number, n: number) => ({ ...exampleService(DEMO_KINDS.card, p, n), card_id: p + 1 });

export const [pubg] = DEMO_TOP_UPS;

/** The C6 extended service of the top-up details: in the account currency, with the discount worked out. */
export const extendedServiceExample = (n: number) => ({
  ...topUpServiceExample(0, n),
  currency: EXAMPLE_CURRENCY.currency,
  currency_symbol: EXAMPLE_CURRENCY.symbol,
  ...discountFigures(demoPricing(pubg!.services[n - 1]!).current),
});

const pubgImage = demoProductImages(DEMO_KINDS.top_up, pubg!);
export const pubgFields = {
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
export const pubgServices = pubg!.services.map((_, i) => i + 1);
export const pubgListItem = {
  ...pubgFields,
  order_information: Object.fromEntries(pubg!.orderFields.map((field, i) => [String(i + 1), field])),
  services: pubgServices.map((n) => topUpServiceExample(0, n)),
};
/** The campaign member of the first demo top-up: old_data and campaign_data filled in. */
export const pubgCampaignService = pubg!.services.findIndex((s) => s.campaign) + 1;

export const [steam] = DEMO_CARDS;
const steamImage = demoProductImages(DEMO_KINDS.card, steam!);
export const steamCard = {
  id: 1,
  category_id: categoryId(steam!),
  name: steam!.name,
  slug: steam!.slug,
  status: 1,
  product_image: exampleAsset(steamImage.image),
  preview_image: exampleAsset(steamImage.preview),
};
