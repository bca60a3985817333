import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { builtOnce, type Db } from '../../db/client.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import { accounts, cardCodes, orderLines, orders, reviews, type ProductKind } from '../../db/schema.js';
import { moneyNumber } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';
import { pageOffset, type PageRequest } from '../../lib/paging.js';
import { STATUS_LABELS, type OrderStatus } from './state.js';

type ReviewInfo = { review: { comment: string | null; rating: number | null; status: 'active' | 'inactive' } };

export type OrderEntry = {
  utr: string;
  price: number;
  currency: string;
  symbol: string;
  status: OrderStatus;
  status_label: string;
  dateTime: string;
  informations: Record<string, string> | never[];
  lines: Array<OrderLine & { codes: string[] }>;
  review_user_info: ReviewInfo[];
};

const value = sql.placeholder;

/** The statements of the order lists and order lookup, per product kind where they differ. */
const statements = builtOnce((db: Db) => {
  const perKind = <T>(build: (kind: ProductKind) => T) => ({ top_up: build('top_up'), card: build('card') });
  return {
    // The account keeps its order counts, so the total costs the same at 10 orders or 100,000.
    total: perKind((kind) =>
      db
        .select({ total: PRODUCT_KINDS[kind].orderCount })
        .from(accounts)
        .where(eq(accounts.id, value('accountId')))
        .prepare(`order_total_${kind}`),
    ),
    page: db
      .select()
      .from(orders)
      .where(and(eq(orders.accountId, value('accountId')), eq(orders.kind, value('kind'))))
      .orderBy(desc(orders.createdAt), desc(orders.id))
      .limit(value('limit'))
      .offset(value('offset'))
      .prepare('order_page'),
    byUtr: db
      .select()
      .from(orders)
      .where(and(eq(orders.utr, value('utr')), eq(orders.accountId, value('accountId'))))
      .prepare('order_by_utr'),
    lines: perKind((kind) => productLines(db, kind).prepare(`order_lines_${kind}`)),
    codes: db
      .select({ lineId: cardCodes.orderLineId, sealed: cardCodes.codeEncrypted })
      .from(cardCodes)
      .where(sql`${cardCodes.orderLineId} = any(${value('lineIds')})`)
      .orderBy(asc(cardCodes.id))
      .prepare('delivered_codes'),
  };
});

/**
 * One page of the caller's orders of one kind, newest first, in four queries whatever the page size:
 * the account's order count, the orders, their lines with products and the caller's reviews, and (cards) the delivered codes.
 * `openCode` decrypts a delivered card code.
 */
export async function listOrders(
  db: Db,
  accountId: number,
  kind: ProductKind,
  page: PageRequest,
  openCode: (sealed: Buffer) => string,
): Promise<{ total: number; entries: OrderEntry[] }> {
  const prepared = statements(db);
  const [{ total } = { total: 0 }] = await prepared.total[kind].execute({ accountId });
  const rows = await prepared.page.execute({ accountId, kind, limit: page.perPage, offset: pageOffset(page) });
  return { total, entries: await entriesOf(db, accountId, kind, rows, openCode) };
}

/** One of the caller's orders by its utr (C18), as the lists show it; null for an unknown or someone else's utr. */
export async function findOrder(
  db: Db,
  accountId: number,
  utr: string,
  openCode: (sealed: Buffer) => string,
): Promise<{ kind: ProductKind; entry: OrderEntry } | null> {
  const [order] = await statements(db).byUtr.execute({ utr, accountId });
  if (!order) return null;
  const [entry] = await entriesOf(db, accountId, order.kind, [order], openCode);
  return { kind: order.kind, entry: entry! };
}

/** The list entries of `rows` (orders of one kind of one account): their lines, reviews and (cards) delivered codes. */
async function entriesOf(
  db: Db,
  accountId: number,
  kind: ProductKind,
  rows: (typeof orders.$inferSelect)[],
  openCode: (sealed: Buffer) => string,
): Promise<OrderEntry[]> {
  if (rows.length === 0) return [];
  const lines = await statements(db).lines[kind].execute({ accountId, orderIds: rows.map((r) => r.id) });
  const codes = kind === 'card' ? await deliveredCodes(db, lines.map((l) => l.lineId), openCode) : new Map<number, string[]>();

  return rows.map((order) => {
    const own = lines.filter((l) => l.orderId === order.id);
    const reviewed = new Map(own.filter((l) => l.reviewStatus !== null).map((l) => [l.productId, l]));
    return {
      utr: order.utr,
      price: moneyNumber(order.total),
      currency: order.currency,
      symbol: order.currencySymbol,
      status: order.status,
      status_label: STATUS_LABELS[order.status],
      dateTime: isoMicros(order.createdAt),
      informations: kind === 'top_up' ? (order.informations ?? {}) : [],
      lines: own.map((l) => ({ ...l, codes: codes.get(l.lineId) ?? [] })),
      review_user_info: [...reviewed.values()].map((l) => ({
        review: {
          comment: l.reviewComment,
          rating: l.reviewRating === null ? null : Number(l.reviewRating),
          status: l.reviewStatus === 1 ? 'active' : 'inactive',
        },
      })),
    };
  });
}

/** A line of an order with its product, service and the caller's review of that product. */
export type OrderLine = Awaited<ReturnType<ReturnType<typeof productLines>['execute']>>[number];

const lineFields = {
  lineId: orderLines.id,
  orderId: orderLines.orderId,
  quantity: orderLines.quantity,
  basePrice: orderLines.basePrice,
  /** Average money discount per unit over the line (campaign units included). */
  discount: sql<string>`round((${orderLines.basePrice} * ${orderLines.quantity} - ${orderLines.lineTotal}) / ${orderLines.quantity}, 2)`,
  codesOwed: orderLines.codesOwed,
  reviewComment: reviews.comment,
  reviewRating: reviews.rating,
  reviewStatus: reviews.status,
};

/** The lines of the orders `orderIds` (placeholders `accountId`, `orderIds`). */
function productLines(db: Db, kind: ProductKind) {
  const { product, service, lineService, serviceProduct } = PRODUCT_KINDS[kind];
  return db
    .select({
      ...lineFields,
      productId: product.id,
      productName: product.name,
      slug: product.slug,
      image: product.image,
      rating: product.avgRating,
      service: service.name,
    })
    .from(orderLines)
    .innerJoin(service, eq(service.id, lineService))
    .innerJoin(product, eq(product.id, serviceProduct))
    .leftJoin(reviews, and(eq(reviews.accountId, value('accountId')), eq(reviews.reviewableType, kind), eq(reviews.reviewableId, product.id)))
    .where(sql`${orderLines.orderId} = any(${value('orderIds')})`)
    .orderBy(asc(orderLines.id));
}

async function deliveredCodes(db: Db, lineIds: number[], openCode: (sealed: Buffer) => string) {
  const byLine = new Map<number, string[]>();
  if (lineIds.length === 0) return byLine;
  const rows = await statements(db).codes.execute({ lineIds });
  for (const row of rows) byLine.set(row.lineId!, [...(byLine.get(row.lineId!) ?? []), openCode(row.sealed)]);
  return byLine;
}
