import type { Context } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { AppError } from '../../errors.js';
import { pageObject } from '../../http/pagination.js';
import { pageOffset, pageRequest } from '../../lib/paging.js';
import { success } from '../../http/respond.js';
import { assetUrl, baseUrl } from '../../http/urls.js';
import { validate } from '../../http/validation.js';
import { utcToday } from '../../lib/time.js';
import type { Db } from '../../db/client.js';
import type { CategoryType } from '../../db/schema.js';
import { reviewJson } from '../reviews/serializers.js';
import { hasOrderedProduct, publishedReviews } from '../reviews/service.js';
import {
  cardDetailsQuery,
  cardListQuery,
  cardServicesQuery,
  topUpDetailsQuery,
  topUpListQuery,
  topUpServicesQuery,
} from './schemas.js';
import {
  campaignJson,
  cardDetailsJson,
  cardJson,
  categoryJson,
  gatewayJson,
  serviceJson,
  topUpDetailsJson,
  topUpListJson,
  type Urls,
} from './serializers.js';
import {
  activeCampaign,
  activeCardServices,
  activeGateways,
  activeTopUpServices,
  categoryIsActive,
  findCard,
  findTopUp,
  findTopUpBySlug,
  listCards,
  listCategories,
  listTopUps,
} from './service.js';

type Ctx = Context<AppEnv>;

const TOP_UPS_PER_PAGE = 10;
/** The top-up details show the first page of its review list. */
const DETAIL_REVIEWS = 15;

/**
 * Catalog rows are the same for every caller, so they come from the process cache (SharedCache:
 * at most 2 s old, dropped everywhere when a campaign changes prices or a review changes ratings).
 * Per-account parts (reviews, hasAlreadyOrdered, currency) are never cached.
 */
const cached = <T>(c: Ctx, key: string, load: (db: Db) => Promise<T>): Promise<T> =>
  c.var.services.catalogCache.get(key, () => load(c.var.services.db));

const urlsFor = (c: Ctx): Urls => ({ asset: (path) => assetUrl(c, path), base: baseUrl(c) });

/** A category filter naming no active category of that kind is an unknown id in the query (C2: 404). */
async function requireCategory(c: Ctx, id: number | undefined, type: CategoryType) {
  if (id !== undefined && !(await cached(c, `category:${type}:${id}`, (db) => categoryIsActive(db, id, type)))) throw new AppError('not_found');
}

/** A2 GET get-category */
export async function getCategories(c: Ctx) {
  const rows = await cached(c, 'categories', listCategories);
  return success(c, { categories: rows.map(categoryJson) });
}

/** A3 GET top-up/list */
export async function getTopUpList(c: Ctx) {
  const query = validate(topUpListQuery, c.req.query(), 'query');
  await requireCategory(c, query.category_id, 'top_up');
  const page = pageRequest(query, TOP_UPS_PER_PAGE);
  const { rows, total } = await cached(c, `top-ups:${query.category_id}:${page.perPage}:${page.page}`, (db) =>
    listTopUps(db, { categoryId: query.category_id, limit: page.perPage, offset: pageOffset(page) }),
  );
  const urls = urlsFor(c);
  return success(c, pageObject(c, 'items', rows.map((row) => topUpListJson(row, urls)), total, page));
}

/** A4 GET top-up/details */
export async function getTopUpDetails(c: Ctx) {
  const { slug } = validate(topUpDetailsQuery, c.req.query(), 'query');
  const { db } = c.var.services;
  const topUp = await cached(c, `top-up:slug:${slug}`, (db) => findTopUpBySlug(db, slug));
  if (!topUp) throw new AppError('not_found');
  const account = c.var.account;
  const [services, reviews, hasAlreadyOrdered, gateways] = await Promise.all([
    cached(c, `top-up-services:${topUp.id}`, (db) => activeTopUpServices(db, [topUp.id])),
    publishedReviews(db, 'top_up', topUp.id, { limit: DETAIL_REVIEWS, offset: 0 }),
    hasOrderedProduct(db, account.id, 'top_up', topUp.id),
    cached(c, 'gateways', activeGateways),
  ]);
  const urls = urlsFor(c);
  return success(c, {
    topUp: topUpDetailsJson(topUp, services, urls, account),
    reviewStatic: {
      reviews: reviews.rows.map((r) => reviewJson(r, urls.asset, { userId: true, target: true, email: true })),
      hasAlreadyOrdered,
    },
    gateways: gateways.map((g) => gatewayJson(g, urls)),
  });
}

/** A5 GET topup/services */
export async function getTopUpServices(c: Ctx) {
  const { top_up_id } = validate(topUpServicesQuery, c.req.query(), 'query');
  if (top_up_id !== undefined && !(await cached(c, `top-up:${top_up_id}`, (db) => findTopUp(db, top_up_id)))) {
    throw new AppError('not_found');
  }
  const services = await cached(c, `top-up-services:${top_up_id ?? 'all'}`, (db) =>
    activeTopUpServices(db, top_up_id === undefined ? undefined : [top_up_id]),
  );
  const urls = urlsFor(c);
  return success(c, { services: services.map((s) => serviceJson(s, urls)) });
}

/** A9 GET get-card */
export async function getCards(c: Ctx) {
  const { category_id } = validate(cardListQuery, c.req.query(), 'query');
  await requireCategory(c, category_id, 'card');
  const rows = await cached(c, `cards:${category_id}`, (db) => listCards(db, category_id));
  const urls = urlsFor(c);
  return success(c, { cards: rows.map((row) => cardJson(row, urls)) });
}

/** A10 GET card/details */
export async function getCardDetails(c: Ctx) {
  const { card_id } = validate(cardDetailsQuery, c.req.query(), 'query');
  const card = await cached(c, `card:${card_id}`, (db) => findCard(db, card_id));
  if (!card) throw new AppError('not_found');
  const [services, gateways] = await Promise.all([
    cached(c, `card-services:${card.id}`, (db) => activeCardServices(db, [card.id])),
    cached(c, 'gateways', activeGateways),
  ]);
  const urls = urlsFor(c);
  return success(c, {
    services: services.map((s) => serviceJson(s, urls)),
    card: cardDetailsJson(card, urls),
    gateways: gateways.map((g) => gatewayJson(g, urls)),
  });
}

/** A11 GET card/services */
export async function getCardServices(c: Ctx) {
  const { card_id } = validate(cardServicesQuery, c.req.query(), 'query');
  if (card_id !== undefined && !(await cached(c, `card:${card_id}`, (db) => findCard(db, card_id)))) throw new AppError('not_found');
  const services = await cached(c, `card-services:${card_id ?? 'all'}`, (db) =>
    activeCardServices(db, card_id === undefined ? undefined : [card_id]),
  );
  const urls = urlsFor(c);
  return success(c, { services: services.map((s) => serviceJson(s, urls)) });
}

/** A17 GET get-campaign: the running campaign, or `campaign: null` (C9). */
export async function getCampaign(c: Ctx) {
  const today = utcToday();
  const active = await cached(c, `campaign:${today}`, (db) => activeCampaign(db, today));
  return success(c, { campaign: active ? campaignJson(active, urlsFor(c)) : null });
}
