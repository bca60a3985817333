import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import {
  campaignCardServices,
  campaigns,
  campaignTopUpServices,
  cardCodes,
  cardServices,
  cards,
  categories,
  gateways,
  reviews,
  topUpServices,
  topUps,
  type ProductKind,
} from '../db/schema.js';
import type { Config } from '../core/env.js';
import { hmacSha256 } from '../lib/crypto.js';
import { utcToday } from '../lib/time.js';
import { createAccount } from '../modules/accounts/service.js';
import { toSnapshot } from '../modules/campaigns/pricing.js';
import { sealCode } from '../modules/inventory/codes.js';
import { refreshRatings } from '../modules/reviews/service.js';
import {
  DEMO_CAMPAIGN,
  DEMO_CARDS,
  DEMO_CATEGORIES,
  DEMO_REVIEWERS,
  DEMO_REVIEWS,
  DEMO_TOP_UPS,
  demoGateways,
  type DemoService,
} from '../demo/catalog.js';

/** Products by slug, so reviews can name what they are about. */
type ProductIds = Map<string, { kind: ProductKind; id: number }>;

const shiftDays = (days: number) => utcToday(new Date(Date.now() + days * 86_400_000));

/** Stable demo codes per service and position, e.g. `STEA-7F3A-91C2-0B5D`. */
function demoCode(config: Config, slug: string, service: string, n: number): string {
  const hex = hmacSha256(config.codeEncryptionKey, `demo-code:${slug}:${service}:${n}`).toString('hex').toUpperCase();
  const prefix = slug.replace(/[^a-z]/g, '').slice(0, 4).toUpperCase();
  return `${prefix}-${hex.slice(0, 4)}-${hex.slice(4, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}`;
}

/** The service row values: while in the campaign, its own pricing waits in old_data (C9). */
function serviceValues(s: DemoService, i: number, imageDir: string, slug: string) {
  const own = { price: s.price, discount: s.discount ?? '0.00', discountType: s.discountType ?? ('flat' as const) };
  const base = {
    name: s.name,
    image: `${imageDir}/${slug}-${i + 1}.webp`,
    status: s.status ?? 1,
    sortBy: i + 1,
  };
  if (!s.campaign) return { ...base, ...own };
  const c = s.campaign;
  return {
    ...base,
    price: c.price,
    discount: c.discount,
    discountType: c.discountType,
    isOffered: 1,
    maxSell: c.maxSell,
    oldData: toSnapshot(own),
    campaignData: toSnapshot(c, c.maxSell),
  };
}

const productImage = (dir: string, slug: string) => ({
  image: `${dir}/${slug}.webp`,
  image_driver: 'local',
  preview: `${dir}/${slug}-preview.webp`,
  preview_driver: 'local',
});

/**
 * Writes the demo catalog (C14): categories of both kinds, top-ups with text and select order fields, cards
 * whose active services hold 20–200 sealed codes, a running campaign already applied to its services,
 * gateways, and published reviews by other accounts. Deterministic: the same installation key gives the
 * same codes.
 */
export async function seedCatalog(tx: Tx, config: Config): Promise<void> {
  const categoryIds = await seedCategories(tx);
  const campaignId = await seedCampaign(tx);
  const productIds: ProductIds = new Map();
  await seedTopUps(tx, categoryIds, campaignId, productIds);
  await seedCards(tx, config, categoryIds, campaignId, productIds);
  await tx.insert(gateways).values(demoGateways(config.STORE_CURRENCY, config.STORE_CURRENCY_SYMBOL));
  await seedReviews(tx, config, productIds);
}

async function seedCategories(tx: Tx): Promise<Map<string, number>> {
  const rows = await tx
    .insert(categories)
    .values(DEMO_CATEGORIES.map((c, i) => ({ name: c.name, icon: c.icon, type: c.type, sortBy: i + 1 })))
    .returning({ id: categories.id });
  return new Map(DEMO_CATEGORIES.map((c, i) => [c.key, rows[i]!.id]));
}

async function seedCampaign(tx: Tx): Promise<number> {
  const { name, startsInDays, endsInDays } = DEMO_CAMPAIGN;
  const [campaign] = await tx
    .insert(campaigns)
    .values({ name, startDate: shiftDays(startsInDays), endDate: shiftDays(endsInDays), status: 1 })
    .returning({ id: campaigns.id });
  return campaign!.id;
}

/** The membership row of a service in the demo campaign, or none. */
const membership = (s: DemoService, campaignId: number) =>
  s.campaign
    ? [{ campaignId, price: s.campaign.price, discount: s.campaign.discount, discountType: s.campaign.discountType, maxSell: s.campaign.maxSell }]
    : [];

async function seedTopUps(tx: Tx, categoryIds: Map<string, number>, campaignId: number, productIds: ProductIds): Promise<void> {
  for (const t of DEMO_TOP_UPS) {
    const [topUp] = await tx
      .insert(topUps)
      .values({
        categoryId: categoryIds.get(t.category)!,
        name: t.name,
        slug: t.slug,
        region: t.region,
        instantDelivery: 1,
        image: productImage('topups', t.slug),
        orderInformation: t.orderFields,
        description: t.description,
        guide: t.guide,
      })
      .returning({ id: topUps.id });
    productIds.set(t.slug, { kind: 'top_up', id: topUp!.id });
    const services = await tx
      .insert(topUpServices)
      .values(t.services.map((s, i) => ({ ...serviceValues(s, i, 'topup-services', t.slug), topUpId: topUp!.id })))
      .returning({ id: topUpServices.id });
    const members = t.services.flatMap((s, i) => membership(s, campaignId).map((m) => ({ ...m, topUpServiceId: services[i]!.id })));
    if (members.length) await tx.insert(campaignTopUpServices).values(members);
  }
}

async function seedCards(tx: Tx, config: Config, categoryIds: Map<string, number>, campaignId: number, productIds: ProductIds): Promise<void> {
  for (const [cardIndex, c] of DEMO_CARDS.entries()) {
    const [card] = await tx
      .insert(cards)
      .values({
        categoryId: categoryIds.get(c.category)!,
        name: c.name,
        slug: c.slug,
        region: c.region,
        image: productImage('cards', c.slug),
        description: c.description,
        guide: c.guide,
        trending: cardIndex === 0 ? 1 : 0,
      })
      .returning({ id: cards.id });
    productIds.set(c.slug, { kind: 'card', id: card!.id });
    const services = await tx
      .insert(cardServices)
      .values(c.services.map((s, i) => ({ ...serviceValues(s, i, 'card-services', c.slug), cardId: card!.id })))
      .returning({ id: cardServices.id });
    const members = c.services.flatMap((s, i) => membership(s, campaignId).map((m) => ({ ...m, cardServiceId: services[i]!.id })));
    if (members.length) await tx.insert(campaignCardServices).values(members);
    for (const [i, s] of c.services.entries()) {
      if ((s.status ?? 1) !== 1) continue;
      // 20–200 codes per active service, varying so stock levels differ.
      const stock = 20 + ((cardIndex * 37 + i * 53) % 181);
      const cardServiceId = services[i]!.id;
      const codes = Array.from({ length: stock }, (_, n) => ({ cardServiceId, ...sealCode(config.codeEncryptionKey, demoCode(config, c.slug, s.name, n)) }));
      await tx.insert(cardCodes).values(codes);
    }
  }
}

async function seedReviews(tx: Tx, config: Config, productIds: ProductIds): Promise<void> {
  const reviewerIds: number[] = [];
  for (const r of DEMO_REVIEWERS) {
    const { id } = await createAccount(tx, { ...r, currency: config.STORE_CURRENCY, currencySymbol: config.STORE_CURRENCY_SYMBOL });
    reviewerIds.push(id);
  }
  for (const [reviewer, slug, rating, comment, hoursAgo] of DEMO_REVIEWS) {
    const product = productIds.get(slug)!;
    const at = sql`now() - make_interval(hours => ${hoursAgo})`;
    await tx.insert(reviews).values({
      accountId: reviewerIds[reviewer]!,
      reviewableType: product.kind,
      reviewableId: product.id,
      rating: rating.toFixed(2),
      comment,
      createdAt: at,
      updatedAt: at,
    });
  }
  for (const product of new Set(DEMO_REVIEWS.map(([, slug]) => productIds.get(slug)!))) {
    await refreshRatings(tx, product.kind, product.id);
  }
}
