import { sql, type SQL } from 'drizzle-orm';
import { batchedRead, builtStatement, type Db } from '../../db/client.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import type { ProductImage, ProductKind } from '../../db/schema.js';
import { isoMicros } from '../../lib/time.js';
import { pageOffset, type PageRequest } from '../../lib/paging.js';
import { STATUS_LABELS, type OrderStatus } from '../order-state/state.js';

type ReviewInfo = { review: { comment: string | null; rating: number | null; status: 'active' | 'inactive' } };

/**
 * A line of an order with its product, service and the caller's review of that product, as the list statement
 * writes it in JSON: money and ratings are JSON numbers (PostgreSQL's numeric text, which reads as the same number
 * as its cents over 100), `codes` the line's delivered codes, still sealed (hex), card lines only.
 */
type LineJson = {
  lineId: number;
  quantity: number;
  basePrice: number;
  /** Average money discount per unit over the line (campaign units included). */
  discount: number;
  codesOwed: number;
  reviewComment: string | null;
  reviewRating: number | null;
  reviewStatus: number | null;
  productId: number;
  productName: string;
  slug: string;
  image: ProductImage;
  rating: number;
  service: string;
  codes?: string[];
};

/** An order of the list statement: created_at is PostgreSQL's text of it (UTC), lines in id order. */
type OrderJson = {
  utr: string;
  price: number;
  currency: string;
  symbol: string;
  /** C24: the rate its prices were converted at; null in the store currency. */
  rate: string | null;
  livemode: boolean;
  status: OrderStatus;
  createdAt: string;
  informations: Record<string, string> | never[];
  lines: LineJson[];
};

/** A line of an order as the presenters read it: its delivered codes opened. */
export type OrderLine = Omit<LineJson, 'codes'> & { codes: string[] };

export type OrderEntry = {
  utr: string;
  price: number;
  currency: string;
  symbol: string;
  rate?: string;
  /** C25: `false` on a test order's entries; left out of a live order's, which read as the spec's. */
  livemode?: false;
  status: OrderStatus;
  status_label: string;
  dateTime: string;
  informations: Record<string, string> | never[];
  lines: OrderLine[];
  review_user_info: ReviewInfo[];
};

/** The columns of an order the entries show (and the account the caller's reviews are looked up by). */
const ORDER_COLUMNS = sql.raw('id, utr, account_id, total, currency, currency_symbol, rate, livemode, status, created_at, informations');

/**
 * The entries of the orders `picked` selects (a query of ORDER_COLUMNS from `orders`, orders of `kind`, at most a page)
 * as one JSON array, newest first: each order with its lines, their product, service and the caller's review, and
 * (cards) the codes delivered to each line, sealed. `[]` when it selects none. The lines of all the picked orders are
 * read in one join and grouped by order: a subquery per order hashed the service table again for each one.
 */
function entriesJson(kind: ProductKind, picked: SQL): SQL {
  const { product, service, serviceProduct, lineService } = PRODUCT_KINDS[kind];
  const codes =
    kind === 'card'
      ? sql`, 'codes', (select coalesce(json_agg(encode(c.code_encrypted, 'hex') order by c.id), '[]') from card_codes c where c.order_line_id = l.id)`
      : sql``;
  return sql`(
    with picked as (${picked}),
    lines as (
      select l.order_id, json_agg(json_build_object(
        'lineId', l.id, 'quantity', l.quantity, 'basePrice', l.base_price,
        'discount', round((l.base_price * l.quantity - l.line_total) / l.quantity, 2),
        'codesOwed', l.codes_owed, 'reviewComment', r.comment, 'reviewRating', r.rating, 'reviewStatus', r.status,
        'productId', p.id, 'productName', p.name, 'slug', p.slug, 'image', p.image, 'rating', p.avg_rating, 'service', s.name
        ${codes}
      ) order by l.id) as lines
      from picked o
      join order_lines l on l.order_id = o.id
      join ${service} s on s.id = l.${sql.identifier(lineService.name)}
      join ${product} p on p.id = s.${sql.identifier(serviceProduct.name)}
      left join reviews r on r.account_id = o.account_id and r.reviewable_type = ${kind} and r.reviewable_id = p.id
      group by l.order_id
    )
    select coalesce(json_agg(json_build_object(
      'utr', o.utr, 'price', o.total, 'currency', o.currency, 'symbol', o.currency_symbol, 'rate', o.rate::text, 'livemode', o.livemode,
      'status', o.status,
      'createdAt', o.created_at::text,
      'informations', ${kind === 'top_up' ? sql`coalesce(o.informations, '{}'::jsonb)` : sql`'[]'::json`},
      'lines', coalesce(x.lines, '[]')
    ) order by o.created_at desc, o.id desc), '[]')
    from picked o left join lines x on x.order_id = o.id
  )`;
}

const perKind = <T>(build: (kind: ProductKind) => T) => ({ top_up: build('top_up'), card: build('card') });

type PageItem = { accountId: number; livemode: boolean; limit: number; offset: number };

/**
 * A page of an account's orders of one kind and mode (C25) in ONE statement: the account's live order count (kept by
 * placement, so the total costs the same at 10 orders or 100,000; test orders, few and short-lived, are counted) and
 * the page's entries as JSON; a null count for an unknown account. The pages that concurrent requests ask for are read
 * together, one row each (batchedRead).
 */
const pageReads = perKind((kind) =>
  batchedRead<PageItem, { total: number | null; entries: OrderJson[] }, 'accountIds' | 'modes' | 'limits' | 'offsets'>(
    (slot) => sql`
    select case when q.livemode then a.${sql.identifier(PRODUCT_KINDS[kind].orderCount.name)}
             else (select count(*)::int from orders t where t.account_id = a.id and not t.livemode and t.kind = ${kind}) end as total,
      ${entriesJson(
        kind,
        sql`select ${ORDER_COLUMNS} from orders where account_id = a.id and livemode = q.livemode and kind = ${kind}
          order by created_at desc, id desc limit q.per_page offset q.skip`,
      )} as entries
    -- Modes travel as 1 (live) and 0 (test): the driver sends a list of booleans as one boolean.
    from (select q.account_id, q.live = 1 as livemode, q.per_page, q.skip, q.n
          from unnest(${slot('accountIds')}::int[], ${slot('modes')}::int[], ${slot('limits')}::int[], ${slot('offsets')}::bigint[])
            with ordinality as q(account_id, live, per_page, skip, n)) q
    left join accounts a on a.id = q.account_id
    order by q.n`,
    (pages) => ({
      accountIds: pages.map((p) => p.accountId),
      modes: pages.map((p) => (p.livemode ? 1 : 0)),
      limits: pages.map((p) => p.limit),
      offsets: pages.map((p) => p.offset),
    }),
    { maxSize: 16, inFlight: 4 },
  ),
);

/**
 * One order of an account by its utr in ONE statement, with its kind: no row for an unknown or someone else's utr, or
 * one of the other mode (C25: a test token never sees a live order, nor a live token a test one).
 */
const byUtrStatement = builtStatement<'utr' | 'accountId' | 'livemode', { kind: ProductKind; entries: OrderJson[] }>(
  (slot) => sql`
  select found.kind, case found.kind
    ${sql.join(
      (['top_up', 'card'] as const).map(
        (kind) => sql`when ${kind} then ${entriesJson(kind, sql`select ${ORDER_COLUMNS} from orders where id = found.id`)}`,
      ),
      sql` `,
    )}
    end as entries
  from orders found
  where found.utr = ${slot('utr')}::text and found.account_id = ${slot('accountId')}::int and found.livemode = ${slot('livemode')}::boolean`,
);

/**
 * One page of the caller's orders of one kind, newest first, in one statement whatever the page size (see
 * pageReads). `openCode` decrypts a delivered card code; only the page's codes are opened.
 */
export async function listOrders(
  db: Db,
  caller: { id: number; livemode: boolean },
  kind: ProductKind,
  page: PageRequest,
  openCode: (sealed: Buffer) => string,
): Promise<{ total: number; entries: OrderEntry[] }> {
  const { total, entries } = await pageReads[kind](db)({ accountId: caller.id, livemode: caller.livemode, limit: page.perPage, offset: pageOffset(page) });
  return { total: total ?? 0, entries: entries.map((order) => entryOf(order, openCode)) };
}

/** One of the caller's orders by its utr (C18), as the lists show it; null for an unknown or someone else's utr. */
export async function findOrder(
  db: Db,
  caller: { id: number; livemode: boolean },
  utr: string,
  openCode: (sealed: Buffer) => string,
): Promise<{ kind: ProductKind; entry: OrderEntry } | null> {
  const [row] = await byUtrStatement(db, { utr, accountId: caller.id, livemode: caller.livemode });
  const order = row?.entries[0];
  return order ? { kind: row.kind, entry: entryOf(order, openCode) } : null;
}

/**
 * The list entry of an order of the list statement: its status label, time, opened codes and the caller's reviews.
 * The lines are the parsed JSON's own objects, their codes opened in place.
 */
function entryOf(order: OrderJson, openCode: (sealed: Buffer) => string): OrderEntry {
  const lines = order.lines as OrderLine[];
  for (const line of lines) line.codes = line.codes ? line.codes.map((hex) => openCode(Buffer.from(hex, 'hex'))) : [];
  // One review per product: the caller's review of each product of the order, in the order of its first line.
  const reviewed = new Map(lines.filter((l) => l.reviewStatus !== null).map((l) => [l.productId, l]));
  return {
    utr: order.utr,
    price: order.price,
    currency: order.currency,
    symbol: order.symbol,
    // Left out of the JSON in the store currency, so such entries read as the spec's.
    rate: order.rate ?? undefined,
    livemode: order.livemode ? undefined : false,
    status: order.status,
    status_label: STATUS_LABELS[order.status],
    dateTime: isoMicros(order.createdAt),
    informations: order.informations,
    lines,
    review_user_info: [...reviewed.values()].map((l) => ({
      review: { comment: l.reviewComment, rating: l.reviewRating, status: l.reviewStatus === 1 ? 'active' : 'inactive' },
    })),
  };
}
