import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import type { Caller } from '../../core/caller.js';
import { cachedJson } from '../../http/cached-json.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { pageObject } from '../../http/pagination.js';
import { assetUrls, baseUrl } from '../../http/urls.js';
import { notFound } from '../../core/errors.js';
import { pageOffset, pageRequest } from '../../lib/paging.js';
import { utcToday } from '../../lib/time.js';
import type { Db } from '../../db/client.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import type { CategoryType, ProductKind } from '../../db/schema.js';
import { activeCampaign } from '../campaigns/service.js';
import type { PriceView } from '../prices/account-price.js';
import { priceViewOf } from '../prices/service.js';
import { signedIn } from '../auth/middleware.js';
import { presentReview } from '../reviews/presenters.js';
import { Review } from '../reviews/schemas.js';
import { publishedReviews } from '../reviews/service.js';
import {
  presentCampaign,
  presentCard,
  presentCardDetails,
  presentCategory,
  presentGateway,
  presentService,
  presentTopUpDetails,
  presentTopUpListItem,
  type AnyService,
  type Urls,
} from './presenters.js';
import {
  Campaign,
  Card,
  CardDetails,
  CardService,
  Category,
  cardDetailsQuery,
  cardListQuery,
  cardServicesQuery,
  Gateway,
  TopUpDetails,
  topUpDetailsQuery,
  TopUpListPage,
  topUpListQuery,
  TopUpService,
  topUpServicesQuery,
} from './schemas.js';
import {
  activeCardServices,
  activeGateways,
  activeTopUpServices,
  categoryIsActive,
  findCard,
  findTopUp,
  findTopUpBySlug,
  hasOrderedTopUp,
  listCards,
  listCategories,
  listTopUps,
} from './service.js';

type Ctx = Context<AppEnv>;

const TOP_UPS_PER_PAGE = 10;
/** The top-up details show the first page of its review list. */
const DETAIL_REVIEWS = 15;

/**
 * Catalog rows and published reviews are the same for every caller, so they come from the process cache
 * (SharedCache: at most 2 s old, dropped everywhere when a campaign changes prices or a review is submitted).
 * Per-account parts (hasAlreadyOrdered, currency) are never cached.
 */
const cached = <T>(c: Ctx, key: string, load: (db: Db) => Promise<T>): Promise<T> =>
  c.get('services').catalogCache.get(key, () => load(c.get('services').db));

/**
 * What a caller's prices depend on (C24): its price tier and its currency. The answers that show prices are kept once
 * per such variant (the cached lane and ETags with them), shared by every account priced alike.
 */
const pricedAs = (caller: Caller) => ({ tier: caller.priceTierId === null ? '' : String(caller.priceTierId), currency: caller.currency });
type PricedAs = ReturnType<typeof pricedAs>;

/** The prices of a variant: its tier's and its currency's, read through the catalog cache. */
const pricesOf = (c: Ctx, as: PricedAs): Promise<PriceView> => {
  const { db, config, catalogCache } = c.get('services');
  return priceViewOf(db, config, (key, load) => catalogCache.get(key, load), {
    priceTierId: as.tier === '' ? null : Number(as.tier),
    currency: as.currency,
  });
};

/** The caller's prices, for an answer read afresh each time. */
const callerPrices = (c: Ctx) => pricesOf(c, pricedAs(c.get('account')!));

const urlsFor = (c: Ctx): Urls => ({ asset: assetUrls(c), base: baseUrl(c) });

/** A category filter naming no active category of that kind is an unknown id in the query (C2: 404). */
async function requireCategory(c: Ctx, id: number | undefined, type: CategoryType) {
  if (id !== undefined && !(await cached(c, `category:${type}:${id}`, (db) => categoryIsActive(db, id, type)))) {
    throw notFound(`${PRODUCT_KINDS[type].words} category`, 'id', id);
  }
}

/** Each product kind's lookups, under the cache keys the details endpoints share. */
const PRODUCTS: Record<
  ProductKind,
  { key: string; find: (db: Db, id: number) => Promise<object | null>; activeServices: (db: Db, ids?: number[]) => Promise<AnyService[]> }
> = {
  top_up: { key: 'top-up', find: findTopUp, activeServices: activeTopUpServices },
  card: { key: 'card', find: findCard, activeServices: activeCardServices },
};

/** The active services of one live product (404 when there is none), or of every product of the kind. */
async function productServices(c: Ctx, kind: ProductKind, productId: number | undefined, as: PricedAs) {
  const { key, find, activeServices } = PRODUCTS[kind];
  if (productId !== undefined && !(await cached(c, `${key}:${productId}`, (db) => find(db, productId)))) throw notFound(PRODUCT_KINDS[kind].words, 'id', productId);
  const services = await cached(c, `${key}-services:${productId ?? 'all'}`, (db) =>
    activeServices(db, productId === undefined ? undefined : [productId]),
  );
  const [urls, view] = [urlsFor(c), await pricesOf(c, as)];
  return services.map((s) => presentService(s, urls, view));
}

/** A catalog read: GET, token required, success envelope around `ok`. */
const read = <Q extends z.ZodObject | undefined = undefined>(
  path: string,
  summary: string,
  tag: string,
  spec: { query?: Q; ok: z.ZodType; errors?: Array<404 | 422>; notModified?: boolean },
) => endpoint({ method: 'get', path, summary, tag, guard: signedIn, ...spec });

/** A2, A3, A4, A5, A9, A10, A11, A17: the catalog, for a signed-in account (C1). */
export function catalogRoutes() {
  const router = contractRouter();

  router.openapi(
    read('/get-category', 'Active categories with their number of active products', 'Catalog', { notModified: true, ok: z.object({ categories: z.array(Category) }) }),
    async (c) => {
      return cachedJson(c, async () => {
        const rows = await cached(c, 'categories', listCategories);
        return { status: 'success' as const, message: { categories: rows.map(presentCategory) } };
      });
    },
  );

  router.openapi(
    read('/top-up/list', 'A page of top-ups with their active services', 'Top-ups', {
      query: topUpListQuery,
      ok: TopUpListPage,
      notModified: true,
      errors: [404, 422],
    }),
    async (c) => {
      const query = c.req.valid('query');
      return cachedJson(c, async (as) => {
        await requireCategory(c, query.category_id, 'top_up');
        const page = pageRequest(query, TOP_UPS_PER_PAGE);
        const { rows, total } = await cached(c, `top-ups:${query.category_id}:${page.perPage}:${page.page}`, (db) =>
          listTopUps(db, { categoryId: query.category_id, limit: page.perPage, offset: pageOffset(page) }),
        );
        const [urls, view] = [urlsFor(c), await pricesOf(c, as)];
        return { status: 'success' as const, message: pageObject(c, 'items', rows.map((row) => presentTopUpListItem(row, urls, view)), total, page) };
      }, pricedAs);
    },
  );

  router.openapi(
    read('/top-up/details', 'One top-up by slug, with reviews and gateways', 'Top-ups', {
      query: topUpDetailsQuery,
      ok: z.object({
        topUp: TopUpDetails,
        reviewStatic: z.object({ reviews: z.array(Review), hasAlreadyOrdered: z.boolean() }),
        gateways: z.array(Gateway),
      }),
      notModified: true,
      errors: [404, 422],
    }),
    async (c) => {
      const { slug } = c.req.valid('query');
      const { db } = c.get('services');
      const topUp = await cached(c, `top-up:slug:${slug}`, (db) => findTopUpBySlug(db, slug));
      if (!topUp) throw notFound('top-up', 'slug', slug);
      // The only part read for this caller alone; the rest is shared by every caller priced alike.
      const variantOf = async (caller: Caller) => ({
        ...pricedAs(caller),
        currencySymbol: caller.currencySymbol,
        hasAlreadyOrdered: await hasOrderedTopUp(db, caller.id, topUp.id),
      });
      return cachedJson(
        c,
        async ({ currency, currencySymbol, hasAlreadyOrdered, tier }) => {
          const [services, reviews, gateways, view] = await Promise.all([
            cached(c, `top-up-services:${topUp.id}`, (db) => activeTopUpServices(db, [topUp.id])),
            cached(c, `top-up-reviews:${topUp.id}`, (db) => publishedReviews(db, 'top_up', topUp.id, { limit: DETAIL_REVIEWS, offset: 0 })),
            cached(c, 'gateways', activeGateways),
            pricesOf(c, { tier, currency }),
          ]);
          const urls = urlsFor(c);
          return {
            status: 'success' as const,
            message: {
              topUp: presentTopUpDetails(topUp, services, urls, { currency, currencySymbol }, view),
              reviewStatic: {
                reviews: reviews.rows.map((r) => presentReview(r, urls.asset, { userId: true, target: true, email: true })),
                hasAlreadyOrdered,
              },
              gateways: gateways.map((g) => presentGateway(g, urls)),
            },
          };
        },
        variantOf,
      );
    },
  );

  router.openapi(
    read('/topup/services', 'Active top-up services', 'Top-ups', {
      query: topUpServicesQuery,
      ok: z.object({ services: z.array(TopUpService) }),
      notModified: true,
      errors: [404, 422],
    }),
    async (c) => {
      const { top_up_id } = c.req.valid('query');
      return cachedJson(c, async (as) => ({ status: 'success' as const, message: { services: await productServices(c, 'top_up', top_up_id, as) } }), pricedAs);
    },
  );

  router.openapi(
    read('/get-card', 'Active cards', 'Cards', { query: cardListQuery, notModified: true, ok: z.object({ cards: z.array(Card) }), errors: [404, 422] }),
    async (c) => {
      const { category_id } = c.req.valid('query');
      return cachedJson(c, async () => {
        await requireCategory(c, category_id, 'card');
        const rows = await cached(c, `cards:${category_id}`, (db) => listCards(db, category_id));
        const urls = urlsFor(c);
        return { status: 'success' as const, message: { cards: rows.map((row) => presentCard(row, urls)) } };
      });
    },
  );

  router.openapi(
    read('/card/details', 'One card with its services and gateways', 'Cards', {
      query: cardDetailsQuery,
      ok: z.object({ services: z.array(CardService), card: CardDetails, gateways: z.array(Gateway) }),
      errors: [404, 422],
    }),
    async (c) => {
      const { card_id } = c.req.valid('query');
      const card = await cached(c, `card:${card_id}`, (db) => findCard(db, card_id));
      if (!card) throw notFound('card', 'id', card_id);
      const [services, gateways, view] = await Promise.all([
        cached(c, `card-services:${card.id}`, (db) => activeCardServices(db, [card.id])),
        cached(c, 'gateways', activeGateways),
        callerPrices(c),
      ]);
      const urls = urlsFor(c);
      return c.json(
        {
          status: 'success' as const,
          message: {
            services: services.map((s) => presentService(s, urls, view)),
            card: presentCardDetails(card, urls),
            gateways: gateways.map((g) => presentGateway(g, urls)),
          },
        },
        200,
      );
    },
  );

  router.openapi(
    read('/card/services', 'Active card services', 'Cards', {
      query: cardServicesQuery,
      ok: z.object({ services: z.array(CardService) }),
      notModified: true,
      errors: [404, 422],
    }),
    async (c) => {
      const { card_id } = c.req.valid('query');
      return cachedJson(c, async (as) => ({ status: 'success' as const, message: { services: await productServices(c, 'card', card_id, as) } }), pricedAs);
    },
  );

  router.openapi(
    read('/get-campaign', 'The running campaign, or null (C9)', 'Campaigns', { ok: z.object({ campaign: Campaign.nullable() }) }),
    async (c) => {
      const today = utcToday();
      const [active, view] = await Promise.all([cached(c, `campaign:${today}`, (db) => activeCampaign(db, today)), callerPrices(c)]);
      return c.json({ status: 'success' as const, message: { campaign: active ? presentCampaign(active, urlsFor(c), view) : null } }, 200);
    },
  );

  return router;
}
