import { randomBytes } from 'node:crypto';
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import { builtOnce, builtStatement, type Db, type DbOrTx } from '../../db/client.js';
import { retryingConflicts } from '../../db/conflicts.js';
import { ACTIVE, liveProduct, names, PRODUCT_KINDS } from '../../db/kinds.js';
import { cards, cardServices, idempotencyKeys, topUpServices, topUps, type OrderField, type OrderFieldValue, type ProductKind } from '../../db/schema.js';
import { AppError, validationError } from '../../core/errors.js';
import { isBlank, isStorableText, matchesFieldPattern, NOT_STORABLE } from '../../lib/text.js';
import { sha256 } from '../../lib/crypto.js';
import { moneyText } from '../../lib/money.js';
import { applicableMembership } from '../campaigns/rule.js';
import { accountPriceSql, accountPricingSql } from '../prices/account-price.js';
import { ORDER_STATUS } from '../order-state/state.js';

/** A fresh order number: kind prefix, time-sortable base36 milliseconds, then randomness (URL-safe, ≤ 32 chars). */
export function newUtr(kind: ProductKind): string {
  const time = Date.now().toString(36).toUpperCase().padStart(9, '0');
  const random = randomBytes(8).toString('hex').toUpperCase();
  return `${kind === 'top_up' ? 'T' : 'C'}${time}${random}`;
}

// ───────────────────────────── request checks against the catalog ─────────────────────────────

export type TopUpOrderRequest = { topUpId: number; serviceId: number; fields: Record<string, unknown> };

/**
 * The top-up and service a top-up order names, with the top-up's order form, built once per database handle (drizzle
 * would build its text for every order). Card orders need no read before placement: the statement checks them.
 */
const orderableTopUp = builtOnce((db: Db) =>
  db
    .select({ orderInformation: topUps.orderInformation, serviceId: topUpServices.id })
    .from(topUps)
    .leftJoin(
      topUpServices,
      and(eq(topUpServices.id, sql.placeholder('serviceId')), eq(topUpServices.topUpId, topUps.id), eq(topUpServices.status, ACTIVE)),
    )
    .where(and(eq(topUps.id, sql.placeholder('topUpId')), liveProduct('top_up')))
    .prepare('orderable_top_up'),
);

/**
 * Checks a top-up order against the catalog: an orderable top-up, one of its active services and
 * every order-form field (`field_name` in the body, `field_value` in messages and in `informations`).
 * All failing fields are reported together (422). `fields` are the same values as suppliers get them: in the form's
 * order, with each field's name and type.
 */
export async function checkTopUpOrder(db: Db, input: TopUpOrderRequest) {
  const { messages, informations, fields } = await topUpOrderFindings(db, input);
  if (messages.length) throw validationError(messages);
  return { informations, fields };
}

/**
 * What checkTopUpOrder finds: the messages of the failing fields (none: the order may go), and the values it read.
 * `serviceId` null: one the request schema refused already, not judged again.
 */
export async function topUpOrderFindings(db: Db, input: Omit<TopUpOrderRequest, 'serviceId'> & { serviceId: number | null }) {
  const [topUp] = await orderableTopUp(db).execute({ topUpId: input.topUpId, serviceId: input.serviceId ?? 0 });
  if (!topUp) return { messages: ['The selected top up id is invalid.'], informations: {}, fields: [] };

  const messages = input.serviceId !== null && topUp.serviceId === null ? ['The selected service id is invalid.'] : [];
  const informations: Record<string, string> = {};
  const fields: OrderFieldValue[] = [];
  for (const field of orderFields(topUp.orderInformation)) {
    const raw = input.fields[field.field_name];
    const value = typeof raw === 'number' ? String(raw) : raw;
    if (isBlank(value) || typeof value !== 'string') {
      messages.push(`The ${field.field_value} field is required.`);
    } else if (!isStorableText(value)) {
      messages.push(`The ${field.field_value} field ${NOT_STORABLE}`);
    } else if (field.field_type === 'select' && !Object.hasOwn(field.option ?? {}, value)) {
      messages.push(`The selected ${field.field_value} is invalid.`);
    } else if (value.length > 255) {
      messages.push(`The ${field.field_value} field must not be greater than 255 characters.`);
    } else if (field.pattern !== undefined && !matchesFieldPattern(field.pattern, value.trim())) {
      messages.push(`The ${field.field_value} field format is invalid.`);
    } else {
      informations[field.field_value] = value.trim();
      fields.push({ name: field.field_name, label: field.field_value, type: field.field_type, value: value.trim() });
    }
  }
  return { messages, informations, fields };
}

/** Whether every card service of `ids` is on sale (active, of a card on sale), as the placement statement checks it. */
export async function cardServicesOrderable(db: DbOrTx, ids: number[]): Promise<boolean> {
  const distinct = [...new Set(ids)];
  const [row] = await db
    .select({ n: count() })
    .from(cardServices)
    .innerJoin(cards, eq(cards.id, cardServices.cardId))
    .where(and(inArray(cardServices.id, distinct), eq(cardServices.status, ACTIVE), liveProduct('card')));
  return row!.n === distinct.length;
}

/** `order_information` is an array of fields; an object keyed by position reads the same. */
const orderFields = (info: OrderField[] | Record<string, OrderField> | null): OrderField[] =>
  Array.isArray(info) ? info : Object.values(info ?? {});

export type CardLineRequest = { serviceId: number; quantity: number };

/**
 * Duplicate service ids are merged into one line (quantities added, first position kept), so each
 * service is reserved and priced once per order; the per-line quantity limit applies to the merged line.
 */
export function mergeCardLines(lines: CardLineRequest[]): CardLineRequest[] {
  const merged = new Map<number, number>();
  for (const line of lines) merged.set(line.serviceId, (merged.get(line.serviceId) ?? 0) + line.quantity);
  return [...merged].map(([serviceId, quantity]) => ({ serviceId, quantity }));
}

// ───────────────────────────── placement ─────────────────────────────

export type Idempotency = { key: string; endpoint: string; digest: Buffer };

export type PlaceOrder = {
  accountId: number;
  kind: ProductKind;
  utr: string;
  topUpId: number | null;
  informations: Record<string, string> | null;
  fields: OrderFieldValue[] | null;
  lines: Array<{ serviceId: number; quantity: number }>;
  idempotency: Idempotency | null;
  /** C24's price guard: the most the whole order may cost in the account's currency (none: no limit). */
  maxPrice?: string | null;
  /** C25: false for a test-mode order; live unless said. */
  livemode?: boolean;
};

/**
 * A new order, or the first order placed under the same Idempotency-Key for the same request (C15), or nothing
 * written because a service is not on sale (inactive, of a product off sale, not of the top-up ordered).
 */
type Replayed = { kind: 'replayed'; utr: string };
export type Placed = { kind: 'placed'; orderId: number; utr: string } | Replayed | { kind: 'unorderable' };

/** Digest of a canonical form of a request: keys sorted at every level, so encodings and key order do not matter. */
export function requestDigest(endpoint: string, request: unknown): Buffer {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
        : v;
  return sha256(`${endpoint}\n${JSON.stringify(canonical(request))}`);
}


/** C6 unit price in SQL, the same rule as campaigns/pricing.ts unitPriceCents (rounded half-up, never below 0). */
export const unitPriceSql = (price: string, discount: string, type: string) =>
  sql.raw(
    `greatest(0, case when ${type} = 'percentage' then round(${price} * (100 - ${discount}) / 100, 2) else ${price} - ${discount} end)`,
  );

type PlacementValue = 'lines' | 'accountId' | 'key' | 'endpoint' | 'digest' | 'answer' | 'utr' | 'topUpId' | 'informations' | 'fields' | 'maxPrice';

/**
 * The placement statement of a product kind in live or test mode (C25), its text built once (see builtStatement). A
 * test order is priced as a live one (campaign units included, counted but never reserved), paid from the test balance,
 * and touches no campaign counter, live balance or order count.
 */
function placementStatement(kind: ProductKind, livemode: boolean) {
  const t = names(kind);
  const { product, serviceProduct, tierService } = PRODUCT_KINDS[kind];
  const services = sql.identifier(t.services);
  const regular = accountPriceSql(sql`g.price`, sql`g.discount`, sql`g.discount_type`, false);
  const offer = accountPriceSql(sql`s.price`, sql`s.discount`, sql`s.discount_type`, true);
  return builtStatement<PlacementValue, { order_id: string | null; orderable: boolean }>(
    (slot) => sql`
    with req as (
      select * from jsonb_to_recordset(${slot('lines')}::jsonb) as r(pos int, service_id int, qty int)
    ), acct as (
      ${accountPricingSql(sql`${slot('accountId')}::int`)}
    ), catalog as (
      -- The catalog check, in the statement's own snapshot: every service active, of a product on sale (of the top-up
      -- ordered, for a top-up). A product taken off sale before the statement started is not ordered, also when the
      -- request's own check read the catalog earlier (a top-up's order form).
      -- While is_offered = 1 the service's own fields are the campaign pricing; the regular one is in old_data.
      select s.id, ${kind === 'card' ? sql`s.card_id` : sql`null::int`} as card_id,
             case when s.is_offered = 1 and s.old_data is not null then (s.old_data->>'price')::numeric else s.price end as price,
             case when s.is_offered = 1 and s.old_data is not null then (s.old_data->>'discount')::numeric else s.discount end as discount,
             case when s.is_offered = 1 and s.old_data is not null then s.old_data->>'discount_type' else s.discount_type end as discount_type
      from ${services} s join ${product} on ${product.id} = s.${sql.identifier(serviceProduct.name)}
      where s.id in (select service_id from req) and s.status = ${ACTIVE} and ${liveProduct(kind)}
        ${kind === 'top_up' ? sql`and s.${sql.identifier(serviceProduct.name)} = ${slot('topUpId')}::int` : sql``}
    ), orderable as (
      -- The regular pricing at the account's price (C24): its tier's, in its currency.
      select g.id, g.card_id, p.price, p.discount, g.discount_type
      from catalog g cross join acct
      left join price_tier_prices own on own.tier_id = acct.price_tier_id and own.${sql.identifier(tierService.name)} = g.id
      cross join lateral (select ${regular.price} as price, ${regular.discount} as discount) p
    ), sellable as (
      select 1 where (select count(*) from orderable) = (select count(*) from req)
    ), claim as (
      insert into idempotency_keys as k (account_id, key, endpoint, request_digest, response_status, response_body)
      select ${slot('accountId')}::int, ${slot('key')}::text, ${slot('endpoint')}::text, ${slot('digest')}::bytea,
             200, ${slot('answer')}::jsonb
      where ${slot('key')}::text is not null and exists (select 1 from sellable)
      on conflict (account_id, key) do update
        set endpoint = excluded.endpoint, request_digest = excluded.request_digest, response_status = excluded.response_status,
            response_body = excluded.response_body, created_at = now()
        where k.created_at < now() - interval '24 hours'
      returning 1
    ), go as (
      select 1 where exists (select 1 from sellable) and (${slot('key')}::text is null or exists (select 1 from claim))
    ), locked as (
      -- Campaign units are sold only at the pricing of the campaign that applies today (C9, one rule), which
      -- must be the one the service carries: between a campaign change and the sync, units sell at the regular price.
      -- NO KEY UPDATE: it serialises reservations, yet does not block the foreign-key checks of other orders' lines
      -- (a FOR UPDATE here deadlocked with an order of the same account holding the account row).
      select s.id, ${offer.price} as price, ${offer.discount} as discount, s.discount_type, s.offered_sell, s.max_sell, s.campaign_id
      from ${services} s
      cross join acct
      cross join lateral ${applicableMembership(kind, sql`s.id`, sql`current_date`)} m
      where s.id in (select service_id from req) and s.is_offered = 1 and s.campaign_id = m.campaign_id
        and exists (select 1 from go)
      order by s.id
      ${livemode ? sql`for no key update of s` : sql``}
    ), alloc as (
      select l.id, l.campaign_id, greatest(0, least(r.qty, l.max_sell - l.offered_sell)) as n,
             ${unitPriceSql('l.price', 'l.discount', 'l.discount_type')} as unit
      from locked l join req r on r.service_id = l.id
    ), ${
      livemode
        ? sql`reserve as (
      update ${services} s set offered_sell = s.offered_sell + a.n, updated_at = now()
      from alloc a where s.id = a.id and a.n > 0
      returning s.id
    ), `
        : sql``
    }priced as (
      select r.pos, r.service_id, r.qty, g.card_id, g.price as base_price, x.unit,
             coalesce(a.n, 0) as campaign_units,
             case when a.n > 0 then a.unit end as campaign_unit_price,
             case when a.n > 0 then a.campaign_id end as campaign_id,
             coalesce(a.n, 0) * coalesce(a.unit, 0) + (r.qty - coalesce(a.n, 0)) * x.unit as line_total
      from req r
      join orderable g on g.id = r.service_id
      cross join lateral (select ${unitPriceSql('g.price', 'g.discount', 'g.discount_type')} as unit) x
      left join alloc a on a.id = r.service_id
    ), debit as (
      -- order_price_guard aborts the whole statement when the total is above the buyer's max_price (migration 0008);
      -- order_currency_guard when the account changed currency since the snapshot priced the order (migration 0013).
      update accounts a
         set ${livemode ? sql`balance = a.balance` : sql`test_balance = coalesce(a.test_balance, 0)`}
               - order_currency_guard(order_price_guard(t.amount, ${slot('maxPrice')}::numeric, acct.currency), a.currency, acct.currency),
             updated_at = now()
             ${livemode ? sql`, ${sql.identifier(t.orderCount)} = a.${sql.identifier(t.orderCount)} + 1` : sql``}
      from (select sum(line_total) as amount from priced) t, acct
      where a.id = ${slot('accountId')}::int and exists (select 1 from go)
      returning a.id, ${livemode ? sql`a.balance` : sql`a.test_balance`} as balance, t.amount
    ), placed as (
      -- The currency the prices were converted to (the snapshot's): the account's own, which changes only at a zero
      -- balance, so a debit waiting on a currency change is 0.00 in either.
      insert into orders (utr, account_id, kind, top_up_id, status, total, currency, currency_symbol, rate, informations, fields, livemode)
      select ${slot('utr')}::text, d.id, ${kind}, ${slot('topUpId')}::int, ${ORDER_STATUS.initiate}, d.amount, acct.currency,
             acct.currency_symbol, acct.rate, ${slot('informations')}::jsonb, ${slot('fields')}::json, ${livemode}
      from debit d, acct
      returning id
    ), ledger as (
      insert into balance_ledger (account_id, amount, balance_after, kind, currency, order_id, livemode)
      select d.id, -d.amount, d.balance, 'order_debit', acct.currency, p.id, ${livemode} from debit d, placed p, acct
    ), written_lines as (
      insert into order_lines (order_id, ${sql.identifier(t.lineService)}, card_id, quantity, base_price, discount, unit_price,
                               campaign_units, campaign_unit_price, campaign_id, line_total, codes_owed)
      select p.id, q.service_id, q.card_id, q.qty, q.base_price, q.base_price - q.unit, q.unit,
             q.campaign_units, q.campaign_unit_price, q.campaign_id, q.line_total,
             ${kind === 'card' ? sql`q.qty` : sql`0`}
      from placed p, priced q
      order by q.pos
    )
    select (select id from placed) as order_id, exists (select 1 from sellable) as orderable`,
  );
}

const placementStatements = {
  live: { card: placementStatement('card', true), top_up: placementStatement('top_up', true) },
  test: { card: placementStatement('card', false), top_up: placementStatement('top_up', false) },
};

/**
 * C25: an Idempotency-Key of a test token is another key than any of a live token: stored after a line break, which
 * no header value can hold, so no key a client sends can name a key of the other mode.
 */
const TEST_KEY_PREFIX = 'test\n';

const inMode = (idem: Idempotency, livemode: boolean): Idempotency => (livemode ? idem : { ...idem, key: `${TEST_KEY_PREFIX}${idem.key}` });

/**
 * C15: the answer already given under this Idempotency-Key of the account (in its mode), or null when no committed
 * claim holds the key (409 for another request). For a check that must not stand between a repeat and its first
 * answer; a claim not yet committed is the placement statement's to wait for, as it settles two requests that race.
 */
export const replayedOrder = (db: DbOrTx, accountId: number, livemode: boolean, idem: Idempotency): Promise<Replayed | null> =>
  keptAnswer(db, accountId, inMode(idem, livemode));

/**
 * Places an order in ONE statement (one round trip, one implicit transaction): check that every service is on
 * sale, claim the Idempotency-Key, reserve campaign units, price every line, debit the balance with its ledger row,
 * insert the order and its lines. Either everything is written or nothing.
 *
 * - Campaign units: services in a campaign (`is_offered = 1`, campaign active today) are locked in id order and take
 *   `least(qty, max_sell − offered_sell)` units at their own (campaign) price; the rest pay the regular
 *   price kept in `old_data`. The lock makes the count exact under any concurrency.
 * - Balance: the debit is `balance − total` on the locked account row; the `accounts_balance_non_negative`
 *   check refuses a debit below zero and aborts the whole statement (reservation included), reported as
 *   insufficient balance.
 * - Idempotency: the key row is inserted with the final answer, so a concurrent repeat waits on the key
 *   and then replays it; an expired key (older than 24 h) is taken over.
 */
export async function placeOrder(db: DbOrTx, input: PlaceOrder): Promise<Placed> {
  const livemode = input.livemode ?? true;
  const idem = input.idempotency && inMode(input.idempotency, livemode);
  const values: Record<PlacementValue, unknown> = {
    lines: JSON.stringify(input.lines.map((l, pos) => ({ pos, service_id: l.serviceId, qty: l.quantity }))),
    accountId: input.accountId,
    key: idem?.key ?? null,
    endpoint: idem?.endpoint ?? null,
    digest: idem?.digest ?? null,
    answer: JSON.stringify({ utr: input.utr }),
    utr: input.utr,
    topUpId: input.topUpId,
    informations: input.informations === null ? null : JSON.stringify(input.informations),
    fields: input.fields === null ? null : JSON.stringify(input.fields),
    maxPrice: input.maxPrice ?? null,
  };
  const place = placementStatements[livemode ? 'live' : 'test'][input.kind];

  let rows: Array<{ order_id: string | null; orderable: boolean }>;
  try {
    rows = await retryingConflicts(() => place(db, values));
  } catch (err) {
    // A total past what a balance can hold (numeric overflow: a dear service at a large rate) is beyond any balance too.
    if (isInsufficientBalance(err) || pgError(err)?.code === NUMERIC_OVERFLOW) throw new AppError('insufficient_balance');
    const total = aboveMaxPrice(err);
    if (total !== null) throw new AppError('above_max_price', `The order costs ${total}, above max_price ${moneyText(input.maxPrice!)}.`);
    throw err;
  }
  // The statement answers one row, whatever it wrote.
  const placed = rows[0]!;
  if (!placed.orderable) {
    // C15: a repeat of an order placed under this key gets its answer, even once its services are off sale.
    const kept = idem ? await keptAnswer(db, input.accountId, idem) : null;
    return kept ?? { kind: 'unorderable' };
  }
  if (placed.order_id !== null) return { kind: 'placed', orderId: Number(placed.order_id), utr: input.utr };
  if (!idem) throw new Error('order placement wrote nothing without an Idempotency-Key');
  const kept = await keptAnswer(db, input.accountId, idem);
  if (!kept) throw new AppError('idempotency_in_progress');
  return kept;
}

/**
 * The answer kept under an Idempotency-Key used in the last 24 hours: the first order for the same request, 409 for a
 * different one, 409 while its first request is still running; null when the key was not used (or too long ago).
 */
async function keptAnswer(db: DbOrTx, accountId: number, idem: Idempotency): Promise<Replayed | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, idem.key), sql`${idempotencyKeys.createdAt} > now() - interval '24 hours'`));
  if (!row) return null;
  if (row.responseStatus === null) throw new AppError('idempotency_in_progress');
  if (row.endpoint !== idem.endpoint || !row.requestDigest.equals(idem.digest)) throw new AppError('idempotency_conflict');
  return { kind: 'replayed', utr: (row.responseBody as { utr: string }).utr };
}

/** numeric_value_out_of_range: a value past its column's precision. */
const NUMERIC_OVERFLOW = '22003';

type PgError = { code?: string; message?: string; detail?: string; constraint_name?: string };

/** The PostgreSQL error behind an error (drizzle wraps it as the cause), or null. */
function pgError(err: unknown): PgError | null {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    if (typeof (e as PgError).code === 'string') return e as PgError;
  }
  return null;
}

/** The total and currency (`12.50 USD`) of an order the price guard refused; null for any other error. */
function aboveMaxPrice(err: unknown): string | null {
  const pg = pgError(err);
  return pg?.code === 'P0001' && pg.message === 'order_above_max_price' ? (pg.detail ?? null) : null;
}

function isInsufficientBalance(err: unknown): boolean {
  const pg = pgError(err);
  return pg?.code === '23514' && (pg.constraint_name === 'accounts_balance_non_negative' || pg.constraint_name === 'accounts_test_balance_non_negative');
}
