import { and, asc, count, eq, inArray, sql, type AnyColumn } from 'drizzle-orm';
import { batchedRead, builtOnce, type Db, type DbOrTx } from '../../db/client.js';
import {
  campaigns,
  cardServices,
  cards,
  categories,
  gateways,
  orders,
  topUpServices,
  topUps,
  type CategoryType,
} from '../../db/schema.js';
import { ACTIVE, liveProduct } from '../../db/kinds.js';
import { ORDER_STATUS } from '../order-state/state.js';
import { orderedTopUp } from '../reviews/service.js';

export type CategoryRow = typeof categories.$inferSelect;
export type TopUpRow = typeof topUps.$inferSelect;
export type CardRow = typeof cards.$inferSelect;
export type TopUpServiceRow = typeof topUpServices.$inferSelect;
export type CardServiceRow = typeof cardServices.$inferSelect;
export type GatewayRow = typeof gateways.$inferSelect;
export type CampaignRow = typeof campaigns.$inferSelect;

/** Only active, non-deleted products are ever shown to clients. */
const liveTopUp = liveProduct('top_up');
const liveCard = liveProduct('card');

/** Active categories with the number of live products in each (A2). */
export async function listCategories(db: DbOrTx) {
  // Qualified by hand: drizzle leaves column names unqualified inside a select list.
  const liveChildren = sql<number>`case ${categories}.type
    when 'top_up' then (select count(*) from ${topUps} where ${topUps}.category_id = ${categories}.id and ${liveTopUp})
    else (select count(*) from ${cards} where ${cards}.category_id = ${categories}.id and ${liveCard}) end`.mapWith(Number);
  return db
    .select({ id: categories.id, name: categories.name, icon: categories.icon, type: categories.type, activeChildren: liveChildren })
    .from(categories)
    .where(eq(categories.status, ACTIVE))
    .orderBy(asc(categories.sortBy), asc(categories.id));
}

export async function categoryIsActive(db: DbOrTx, id: number, type: CategoryType): Promise<boolean> {
  const [row] = await db
    .select({ id: categories.id })
    .from(categories)
    .where(and(eq(categories.id, id), eq(categories.type, type), eq(categories.status, ACTIVE)));
  return row !== undefined;
}

/**
 * Services are listed by price when their product sorts by price (sort_by 2), otherwise by their own
 * sort key and creation order (sort_by 1, by date).
 */
const serviceOrder = (productSortBy: AnyColumn, service: typeof topUpServices | typeof cardServices) => [
  asc(sql`case when ${productSortBy} = 2 then ${service.price} end`),
  asc(service.sortBy),
  asc(service.createdAt),
  asc(service.id),
];

/** Active services of live top-ups, optionally only of `topUpIds`. */
export async function activeTopUpServices(db: DbOrTx, topUpIds?: number[]): Promise<TopUpServiceRow[]> {
  if (topUpIds?.length === 0) return [];
  const rows = await db
    .select({ service: topUpServices })
    .from(topUpServices)
    .innerJoin(topUps, eq(topUps.id, topUpServices.topUpId))
    .where(and(eq(topUpServices.status, ACTIVE), liveTopUp, topUpIds ? inArray(topUpServices.topUpId, topUpIds) : undefined))
    .orderBy(asc(topUpServices.topUpId), ...serviceOrder(topUps.sortBy, topUpServices));
  return rows.map((r) => r.service);
}

/** Active services of live cards, optionally only of `cardIds`. */
export async function activeCardServices(db: DbOrTx, cardIds?: number[]): Promise<CardServiceRow[]> {
  if (cardIds?.length === 0) return [];
  const rows = await db
    .select({ service: cardServices })
    .from(cardServices)
    .innerJoin(cards, eq(cards.id, cardServices.cardId))
    .where(and(eq(cardServices.status, ACTIVE), liveCard, cardIds ? inArray(cardServices.cardId, cardIds) : undefined))
    .orderBy(asc(cardServices.cardId), ...serviceOrder(cards.sortBy, cardServices));
  return rows.map((r) => r.service);
}

/** A page of live top-ups (optionally of one category) with their active services (A3). */
export async function listTopUps(db: DbOrTx, filter: { categoryId?: number; limit: number; offset: number }) {
  const where = and(liveTopUp, filter.categoryId === undefined ? undefined : eq(topUps.categoryId, filter.categoryId));
  const [rows, [totals]] = await Promise.all([
    db.select().from(topUps).where(where).orderBy(asc(topUps.id)).limit(filter.limit).offset(filter.offset),
    db.select({ total: count() }).from(topUps).where(where),
  ]);
  const services = await activeTopUpServices(
    db,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((row) => ({ ...row, services: services.filter((s) => s.topUpId === row.id) })), total: totals?.total ?? 0 };
}

export async function findTopUpBySlug(db: DbOrTx, slug: string): Promise<TopUpRow | null> {
  const [row] = await db.select().from(topUps).where(and(eq(topUps.slug, slug), liveTopUp));
  return row ?? null;
}

export async function findTopUp(db: DbOrTx, id: number): Promise<TopUpRow | null> {
  const [row] = await db.select().from(topUps).where(and(eq(topUps.id, id), liveTopUp));
  return row ?? null;
}

/** Live cards, optionally of one category (A9). */
export async function listCards(db: DbOrTx, categoryId?: number): Promise<CardRow[]> {
  return db
    .select()
    .from(cards)
    .where(and(liveCard, categoryId === undefined ? undefined : eq(cards.categoryId, categoryId)))
    .orderBy(asc(cards.id));
}

export async function findCard(db: DbOrTx, id: number): Promise<CardRow | null> {
  const [row] = await db.select().from(cards).where(and(eq(cards.id, id), liveCard));
  return row ?? null;
}

/** Active gateways, informational only (C7). */
export async function activeGateways(db: DbOrTx): Promise<GatewayRow[]> {
  return db.select().from(gateways).where(eq(gateways.status, ACTIVE)).orderBy(asc(gateways.sortBy), asc(gateways.id));
}

/** How many (account, top-up) pairs with a completed order a process keeps in mind before it starts again. */
const SETTLED_PAIRS = 100_000;

type Pair = { accountId: number; topUpId: number };

/**
 * The top-up details' `hasAlreadyOrdered` (C10: a non-refunded order of the top-up), read on every request. An
 * account's order of the top-up that is completed settles the answer for good: completed is a final status (C8) and
 * orders are never deleted (retention keeps them), so such a pair is remembered by each process on its own and not
 * read again. Any other answer can change at once, in any process: a refund makes it false, a new order true; it is
 * read every time, after the request arrived, the reads of concurrent requests in one statement (batchedRead: one
 * statement each was most of the details' cost under load): the status of each pair's best order, or null.
 */
const bestOrderStatus = batchedRead<Pair, { status: number | null }, 'accountIds' | 'topUpIds'>(
  (slot) => sql`
    select (select ${orders.status} from ${orders} where ${orderedTopUp(sql`p.account_id`, sql`p.top_up_id`)}
            order by ${orders.status} = ${ORDER_STATUS.completed} desc limit 1) as status
    from unnest(${slot('accountIds')}::int[], ${slot('topUpIds')}::int[]) with ordinality as p(account_id, top_up_id, n)
    order by p.n`,
  (pairs) => ({ accountIds: pairs.map((p) => p.accountId), topUpIds: pairs.map((p) => p.topUpId) }),
  { maxSize: 128, inFlight: 2 },
);

/** The pairs each database handle's process has seen settled. */
const settledPairs = builtOnce((_db: Db) => new Set<string>());

export async function hasOrderedTopUp(db: Db, accountId: number, topUpId: number): Promise<boolean> {
  const settled = settledPairs(db);
  const pair = `${accountId}:${topUpId}`;
  if (settled.has(pair)) return true;
  const { status } = await bestOrderStatus(db)({ accountId, topUpId });
  if (status === ORDER_STATUS.completed) {
    if (settled.size >= SETTLED_PAIRS) settled.clear();
    settled.add(pair);
  }
  return status !== null;
}
