import { and, count, desc, eq, ne, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { liveProduct, PRODUCT_KINDS } from '../../db/kinds.js';
import { accounts, orderLines, orders, reviews, type ProductKind } from '../../db/schema.js';
import { ORDER_STATUS } from '../order-state/state.js';

/** `reviews.status` of a review shown to everyone (0: held for approval). */
export const PUBLISHED = 1;

/** A published review with its author, as review lists show it. */
export type ReviewWithAuthor = typeof reviews.$inferSelect & {
  author: {
    id: number;
    firstname: string;
    lastname: string;
    email: string | null;
    image: string | null;
    imageDriver: string;
    /** Seen within the last five minutes. */
    recentlySeen: boolean;
  };
};

/** Published reviews of a product, newest first (C10), and how many there are in all. */
export async function publishedReviews(
  db: DbOrTx,
  kind: ProductKind,
  productId: number,
  window: { limit: number; offset: number },
): Promise<{ rows: ReviewWithAuthor[]; total: number }> {
  const where = and(eq(reviews.reviewableType, kind), eq(reviews.reviewableId, productId), eq(reviews.status, PUBLISHED));
  const [rows, [totals]] = await Promise.all([
    db
      .select({
        review: reviews,
        author: {
          id: accounts.id,
          firstname: accounts.firstname,
          lastname: accounts.lastname,
          email: accounts.email,
          image: accounts.image,
          imageDriver: accounts.imageDriver,
          recentlySeen: sql<boolean>`coalesce(${accounts}.last_seen_at > now() - interval '5 minutes', false)`,
        },
      })
      .from(reviews)
      .innerJoin(accounts, eq(accounts.id, reviews.accountId))
      .where(where)
      .orderBy(desc(reviews.createdAt), desc(reviews.id))
      .limit(window.limit)
      .offset(window.offset),
    db.select({ total: count() }).from(reviews).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r.review, author: r.author })), total: totals?.total ?? 0 };
}

/**
 * The account's non-refunded live orders of a top-up (C10; a test order buys nothing, C25), for values, statement
 * placeholders or SQL expressions.
 */
export const orderedTopUp = (accountId: number | Placeholder | SQL, topUpId: number | Placeholder | SQL) =>
  and(eq(orders.accountId, accountId), eq(orders.topUpId, topUpId), ne(orders.status, ORDER_STATUS.refund), eq(orders.livemode, true));

/**
 * Whether the account has a non-refunded live order of the product (C10 `hasAlreadyOrdered`; what a review needs).
 * Top-up orders name their top-up on the order; card orders name their cards on the lines.
 */
export async function hasOrderedProduct(db: DbOrTx, accountId: number, kind: ProductKind, productId: number): Promise<boolean> {
  const query =
    kind === 'top_up'
      ? db.select({ id: orders.id }).from(orders).where(orderedTopUp(accountId, productId))
      : db
          .select({ id: orders.id })
          .from(orderLines)
          .innerJoin(orders, eq(orders.id, orderLines.orderId))
          .where(and(eq(orders.accountId, accountId), eq(orderLines.cardId, productId), ne(orders.status, ORDER_STATUS.refund), eq(orders.livemode, true)));
  const rows = await query.limit(1);
  return rows.length > 0;
}

const productTable = (kind: ProductKind) => PRODUCT_KINDS[kind].product;

export type ReviewOutcome = 'submitted' | 'unknown_product' | 'not_purchased' | 'already_reviewed';

/** The product's row while it is on sale: reviews are listed and taken only for those. */
const liveProductRow = (kind: ProductKind, productId: number) => sql`select 1 from ${productTable(kind)} where id = ${productId} and ${liveProduct(kind)}`;

export async function isLiveProduct(db: DbOrTx, kind: ProductKind, productId: number): Promise<boolean> {
  return (await db.execute(liveProductRow(kind, productId))).length > 0;
}

/**
 * Adds an account's review of a product (C10). In one transaction: the product row is locked so the
 * published count and average are recomputed after every concurrent review has committed; the
 * unique index (one review per account and product) settles races between two reviews of one account:
 * the later insert waits for the earlier one and then does nothing.
 */
export async function submitReview(
  db: DbOrTx,
  input: { accountId: number; kind: ProductKind; productId: number; rating: number; comment: string; published: boolean },
): Promise<ReviewOutcome> {
  return db.transaction(async (tx) => {
    const locked = await tx.execute(sql`${liveProductRow(input.kind, input.productId)} for no key update`);
    if (locked.length === 0) return 'unknown_product';
    if (!(await hasOrderedProduct(tx, input.accountId, input.kind, input.productId))) return 'not_purchased';
    const inserted = await tx
      .insert(reviews)
      .values({
        accountId: input.accountId,
        reviewableType: input.kind,
        reviewableId: input.productId,
        rating: input.rating.toFixed(2),
        comment: input.comment,
        status: input.published ? PUBLISHED : 0,
      })
      .onConflictDoNothing({ target: [reviews.accountId, reviews.reviewableType, reviews.reviewableId] })
      .returning({ id: reviews.id });
    if (inserted.length === 0) return 'already_reviewed';
    if (input.published) await refreshRatings(tx, input.kind, input.productId);
    return 'submitted';
  });
}

/** Recomputes `total_review` and `avg_rating` of a product from its published reviews. */
export async function refreshRatings(db: DbOrTx, kind: ProductKind, productId: number): Promise<void> {
  const product = productTable(kind);
  await db.execute(sql`
    update ${product} set
      total_review = totals.n,
      avg_rating = totals.average
    from (
      select count(*)::int as n, coalesce(round(avg(rating), 2), 0) as average
      from ${reviews}
      where reviewable_type = ${kind} and reviewable_id = ${productId} and status = ${PUBLISHED}
    ) totals
    where ${product}.id = ${productId}`);
}
