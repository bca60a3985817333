import { sql, type SQL } from 'drizzle-orm';
import { batchedRead, builtStatement, type Db } from '../../db/client.js';
import { processSeal } from '../../lib/crypto.js';
import { openSealedArrays } from '../../lib/sealed-text.js';
import { StampedCache } from '../../lib/stamped-cache.js';
import type { OwnedStamps } from '../../lib/change-stamps.js';
import type { KeptOrderPage } from '../../runtime/services.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import type { ProductKind } from '../../db/schema.js';
import { pageOffset, type PageRequest } from '../../lib/paging.js';
import { STATUS_LABELS } from '../order-state/state.js';

/**
 * The order entries (spec §2 Order) are written by PostgreSQL as the JSON text the client gets, byte for byte: reading
 * them as JSON, turning them into objects and serialising them again was most of an order list's CPU. Only the card
 * codes are spliced in here, opened (they are stored sealed). The text is built with `||` rather than json_build_object,
 * whose output has spaces and no way to leave a key out (`rate` in the store currency, `livemode` on live orders).
 */

/** A JSON object's text from its fields' JSON texts; an `optional` field whose text is null is left out. */
function jsonObject(fields: Array<[name: string, json: SQL, presence?: 'optional']>): SQL {
  const parts = fields.map(([name, json, presence], i) => {
    if (!/^[a-z_A-Z]+$/.test(name) || (i === 0 && presence)) throw new Error(`bad JSON field ${name}`);
    const key = sql.raw(`'${i === 0 ? '' : ','}"${name}":'`);
    return presence ? sql`coalesce(${key} || ${json}, '')` : sql`${key} || coalesce(${json}, 'null')`;
  });
  return sql`('{' || ${sql.join(parts, sql` || `)} || '}')`;
}

/** A value's JSON text (strings escaped, numbers, booleans); null for SQL null. */
const json = (value: SQL) => sql`to_json(${value})::text`;
/** A numeric's JSON number without trailing zeros (12.50 → 12.5), as JavaScript writes the same number. */
const money = (value: SQL) => sql`trim_scale(${value})::text`;
/** The JSON array of the texts `element` gives, in `order`; `[]` for none (null elements are left out). */
const jsonArray = (element: SQL, order: SQL) => sql`('[' || coalesce(string_agg(${element}, ',' order by ${order}), '') || ']')`;

/** The label of a status code, from the state machine's own table. */
const statusLabel = (status: SQL) =>
  sql`(case ${status} ${sql.join(
    Object.entries(STATUS_LABELS).map(([code, label]) => sql`when ${sql.raw(String(Number(code)))} then ${sql.raw(`'"${label}"'`)}`),
    sql` `,
  )} end)`;

/** A stored file path as the URL a client fetches (http/urls.ts assetUrlsUnder): absolute URLs pass through, none is ''. */
const assetUrl = (path: SQL, base: SQL) => sql`(case when coalesce(${path}, '') = '' then '' when ${path} ~ '^https?://' then ${path}
  else ${base} || '/' || ltrim(${path}, '/') end)`;

/** Where a card line's codes go: its sealed codes in hex, as a JSON array (opened by openSealedArrays as the page is read). */
const CODES_FIELD = '"card_codes":[';

/** A card line's `stock_short` text (spec §2 Order). */
const stockShort = (owed: SQL) =>
  sql`(case when ${owed} = 0 then '' when ${owed} = 1 then '1 code will be sent as soon as stock arrives.'
    else ${owed} || ' codes will be sent as soon as stock arrives.' end)`;

/**
 * The JSON of each field an order_details entry may hold, for a line of `o` (the order), `l` (the line), `s` (its
 * service), `p` (its product); `asset`: the base of the asset URLs.
 */
const lineValues = (asset: SQL) => ({
  utr: json(sql`o.utr`),
  id: json(sql`p.id`),
  rating: money(sql`p.avg_rating`),
  image: json(assetUrl(sql`p.image->>'image'`, asset)),
  name: json(sql`p.name`),
  card: json(sql`p.name`),
  slug: json(sql`p.slug`),
  service: json(sql`s.name`),
  base_price: money(sql`l.base_price`),
  currency: json(sql`o.currency`),
  symbol: json(sql`o.currency_symbol`),
  discount: money(sql`round((l.base_price * l.quantity - l.line_total) / l.quantity, 2)`),
  quantity: json(sql`l.quantity`),
  card_codes: sql`(select ${jsonArray(sql`'"' || encode(c.code_encrypted, 'hex') || '"'`, sql`c.id`)} from card_codes c where c.order_line_id = l.id)`,
  stock_short: json(stockShort(sql`l.codes_owed`)),
});

/** The fields of an order_details entry of each kind, in the spec's order (§2 Order). */
const LINE_FIELDS = {
  top_up: ['utr', 'rating', 'image', 'discount', 'quantity', 'name', 'service', 'base_price', 'currency', 'symbol', 'slug'],
  card: ['utr', 'id', 'rating', 'image', 'card', 'slug', 'service', 'base_price', 'currency', 'symbol', 'discount', 'quantity', 'card_codes', 'stock_short'],
} as const satisfies Record<ProductKind, ReadonlyArray<keyof ReturnType<typeof lineValues>>>;

/** The order_details entry of a line of an order of `kind`. */
function lineJson(kind: ProductKind, asset: SQL): SQL {
  const values = lineValues(asset);
  return jsonObject(LINE_FIELDS[kind].map((name) => [name, values[name]]));
}

/** An order's `informations`: a top-up's form answers as an object (`{}` without), `[]` for a card order. */
const INFORMATIONS = {
  top_up: sql`(select '{' || coalesce(string_agg(to_json(f.key)::text || ':' || f.value::text, ',' order by f.n), '') || '}'
    from jsonb_each(coalesce(o.informations, '{}')) with ordinality as f(key, value, n))`,
  card: sql`'[]'`,
};

/** A review of the caller's as an order entry shows it (`r`: the review). */
const REVIEW = jsonObject([
  [
    'review',
    jsonObject([
      ['comment', json(sql`r.comment`)],
      ['rating', money(sql`r.rating`)],
      ['status', sql`case when r.status = 1 then '"active"' else '"inactive"' end`],
    ]),
  ],
]);

/**
 * The entries of the orders `picked` selects (a query of ORDER_COLUMNS from `orders`, orders of `kind`, at most a page)
 * as the text of one JSON array, newest first: each order with its lines, their product and service, the caller's
 * review of each product (in the order of its first line) and, for cards, each line's codes, sealed (openSealedArrays
 * opens them). Each picked order's lines are found by its id, then joined to their services and products in one join
 * and grouped by order: a whole subquery per order hashed the service table again for each one. `asset`: the base of
 * the asset URLs.
 */
function entriesJson(kind: ProductKind, picked: SQL, asset: SQL): SQL {
  const { product, service, serviceProduct, lineService } = PRODUCT_KINDS[kind];
  const entry = jsonObject([
    ['utr', json(sql`o.utr`)],
    ['price', money(sql`o.total`)],
    ['currency', json(sql`o.currency`)],
    ['symbol', json(sql`o.currency_symbol`)],
    // C24: only in another currency than the store's; C25: `false` on test orders only, so live entries read as the spec's.
    ['rate', json(sql`o.rate::text`), 'optional'],
    ['livemode', sql`case when not o.livemode then 'false' end`, 'optional'],
    ['status', json(sql`o.status`)],
    ['status_label', statusLabel(sql`o.status`)],
    ['dateTime', json(sql`to_char(o.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`)],
    ['order_details', sql`coalesce(x.lines, '[]')`],
    ['informations', INFORMATIONS[kind]],
    ['review_user_info', sql`coalesce(x.reviews, '[]')`],
  ]);
  return sql`(
    with picked as (${picked}),
    line_rows as (
      select l.order_id, l.id, ${lineJson(kind, asset)} as line,
        case when r.status is not null and row_number() over (partition by l.order_id, p.id order by l.id) = 1 then ${REVIEW} end as review
      from picked o
      -- Each picked order's lines by order_lines_order_idx. The page's size is a parameter, so the planner cannot see
      -- that it is at most 100 orders: it took the page for thousands and hashed every line of the store (43 ms a page
      -- at 60,000 lines, growing with the store). OFFSET 0 keeps this subquery from being folded into that join.
      join lateral (select * from order_lines where order_id = o.id offset 0) l on true
      join ${service} s on s.id = l.${sql.identifier(lineService.name)}
      join ${product} p on p.id = s.${sql.identifier(serviceProduct.name)}
      left join reviews r on r.account_id = o.account_id and r.reviewable_type = ${kind} and r.reviewable_id = p.id
    ),
    -- Built once for the page: the page may be guessed at one order (its size is a parameter), and an inlined aggregate
    -- then sat inside a nested loop over the page's orders and was built again for each of them (64 code lookups for a
    -- page of ten one-line orders).
    lines as materialized (
      select order_id, ${jsonArray(sql`line`, sql`id`)} as lines, ${jsonArray(sql`review`, sql`id`)} as reviews
      from line_rows group by order_id
    )
    select ${jsonArray(entry, sql`o.created_at desc, o.id desc`)}
    from picked o left join lines x on x.order_id = o.id
  )`;
}

/** The columns of an order the entries show (and the account the caller's reviews are looked up by). */
const ORDER_COLUMNS = sql.raw('id, utr, account_id, total, currency, currency_symbol, rate, livemode, status, created_at, informations');

const perKind = <T>(build: (kind: ProductKind) => T) => ({ top_up: build('top_up'), card: build('card') });

type PageItem = { accountId: number; livemode: boolean; limit: number; offset: number; after: string; assetBase: string };

/** A page as the database wrote it: the account's count, and the entries' text with their codes still sealed. */
type PageText = { total: number | null; entries: string };

/**
 * A page of an account's orders of one kind and mode (C25) in ONE statement: the account's live order count (kept by
 * placement, so the total costs the same at 10 orders or 100,000; test orders, few and short-lived, are counted) and
 * the page's entries as JSON text; a null count for an unknown account. With `after` (the utr of an order of the same
 * list) the page starts below that order in the list's index (keyset: no order above it is read); without one, or one
 * that is not in the list, it skips `offset` orders. The pages that concurrent requests ask for are read together, one
 * row each (batchedRead).
 */
const pageReads = perKind((kind) =>
  batchedRead<PageItem, PageText, 'accountIds' | 'modes' | 'limits' | 'offsets' | 'afters' | 'assetBases'>(
    (slot) => sql`
    select case when q.livemode then a.${sql.identifier(PRODUCT_KINDS[kind].orderCount.name)}
             else (select count(*)::int from orders t where t.account_id = a.id and not t.livemode and t.kind = ${kind}) end as total,
      ${entriesJson(
        kind,
        // Without a cursor the bound is above every order: one row comparison either way, which the list's index takes.
        sql`select ${ORDER_COLUMNS} from orders where account_id = a.id and livemode = q.livemode and kind = ${kind}
            and (created_at, id) < (coalesce(c.created_at, 'infinity'), coalesce(c.id, ${Number.MAX_SAFE_INTEGER}))
          order by created_at desc, id desc limit q.per_page offset case when c.id is null then q.skip else 0 end`,
        sql`q.asset_base`,
      )} as entries
    -- Modes travel as 1 (live) and 0 (test): the driver sends a list of booleans as one boolean.
    from (select q.account_id, q.live = 1 as livemode, q.per_page, q.skip, q.after, q.asset_base, q.n
          from unnest(${slot('accountIds')}::int[], ${slot('modes')}::int[], ${slot('limits')}::int[], ${slot('offsets')}::bigint[],
            ${slot('afters')}::text[], ${slot('assetBases')}::text[]) with ordinality as q(account_id, live, per_page, skip, after, asset_base, n)) q
    left join accounts a on a.id = q.account_id
    left join lateral (select created_at, id from orders
      where utr = q.after and account_id = q.account_id and livemode = q.livemode and kind = ${kind}) c on true
    order by q.n`,
    (pages) => ({
      accountIds: pages.map((p) => p.accountId),
      modes: pages.map((p) => (p.livemode ? 1 : 0)),
      limits: pages.map((p) => p.limit),
      offsets: pages.map((p) => p.offset),
      // No cursor travels as '' (no utr is empty): it finds no order.
      afters: pages.map((p) => p.after),
      assetBases: pages.map((p) => p.assetBase),
    }),
    { maxSize: 16, inFlight: 4 },
  ),
);

/**
 * One order of an account by its utr in ONE statement, with its kind: no row for an unknown or someone else's utr, or
 * one of the other mode (C25: a test token never sees a live order, nor a live token a test one).
 */
const byUtrStatement = builtStatement<'utr' | 'accountId' | 'livemode' | 'assetBase', { kind: ProductKind; entries: string }>(
  (slot) => sql`
  select found.kind, case found.kind
    ${sql.join(
      (['top_up', 'card'] as const).map(
        (kind) => sql`when ${kind} then ${entriesJson(kind, sql`select ${ORDER_COLUMNS} from orders where id = found.id`, sql`${slot('assetBase')}::text`)}`,
      ),
      sql` `,
    )}
    end as entries
  from orders found
  where found.utr = ${slot('utr')}::text and found.account_id = ${slot('accountId')}::int and found.livemode = ${slot('livemode')}::boolean`,
);

/** How an order list reads: whose orders, the base of the asset URLs, and how a sealed card code is opened. */
export type OrderReader = {
  caller: { id: number; livemode: boolean };
  assetBase: string;
  openCode: (sealed: Buffer) => string;
};

/** Where the pages come from: the database, through the process's cache of pages under their accounts' stamps. */
export type PageSource = { db: Db; orderPages: Pick<OwnedStamps, 'stampOf'>; orderPageCache: StampedCache<KeptOrderPage> };

/** A cache that keeps nothing. */
const NOTHING_KEPT = new StampedCache<KeptOrderPage>({ maxAgeMs: 0, maxSize: 0, sizeOf: () => 0 });

/** Every page read from the database, none kept: for what measures the list's statement itself. */
export const fromDatabase = (db: Db): PageSource => ({ db, orderPages: { stampOf: async () => null }, orderPageCache: NOTHING_KEPT });

/**
 * One page of the caller's orders of one kind, newest first, in one statement whatever the page size (see pageReads):
 * `entries` is the text of the JSON array of its entries, `last` the utr of its last entry (the next page's cursor).
 * `after`: the utr of the last order of the page before, if the caller has it. A page read again while nothing it shows
 * has changed comes from the cache, where it is kept sealed under this process's own key (processSeal).
 */
export async function listOrders(
  { db, orderPages, orderPageCache }: PageSource,
  reader: OrderReader,
  kind: ProductKind,
  page: PageRequest & { after?: string },
): Promise<{ total: number; entries: string; last: string | undefined }> {
  const item: PageItem = {
    accountId: reader.caller.id,
    livemode: reader.caller.livemode,
    limit: page.perPage,
    offset: pageOffset(page),
    after: page.after ?? '',
    assetBase: reader.assetBase,
  };
  const key = JSON.stringify([kind, item.accountId, item.livemode, item.limit, item.offset, item.after, item.assetBase]);
  // The page's codes are opened once, as it is read, and the page kept sealed whole: a read opens one cipher.
  const read = async (): Promise<KeptOrderPage> => {
    const row = await pageReads[kind](db)(item);
    const entries = openSealedArrays(row.entries, CODES_FIELD, reader.openCode);
    return { total: row.total, entries: KEPT_PAGES.seal(entries), last: lastUtr(row.entries) };
  };
  const { total, entries, last } = await orderPageCache.get(key, () => orderPages.stampOf(item.accountId), read);
  return { total: total ?? 0, entries: KEPT_PAGES.open(entries), last };
}

/** What seals the pages this process keeps (their codes in the clear only while a page is sent). */
const KEPT_PAGES = processSeal();

/**
 * The utr of the last entry of `entries`. An entry opens with its utr and its price (entriesJson); a line of its
 * order_details opens with the utr too but never with the price next, and inside a string every quote is escaped, so
 * `{"utr":"…","price":` is an entry's start and nothing else.
 */
function lastUtr(entries: string): string | undefined {
  let last: string | undefined;
  for (const [, utr] of entries.matchAll(ENTRY_START)) last = utr;
  return last;
}
const ENTRY_START = /\{"utr":"([^"\\]*)","price":/g;

/** One of the caller's orders by its utr (C18), the text of its entry as the lists show it; null for an unknown or someone else's utr. */
export async function findOrder(db: Db, reader: OrderReader, utr: string): Promise<{ kind: ProductKind; entry: string } | null> {
  const [row] = await byUtrStatement(db, { utr, accountId: reader.caller.id, livemode: reader.caller.livemode, assetBase: reader.assetBase });
  // The array of its one entry, without its brackets.
  return row ? { kind: row.kind, entry: openSealedArrays(row.entries, CODES_FIELD, reader.openCode).slice(1, -1) } : null;
}

