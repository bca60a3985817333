import { sql, type SQL } from 'drizzle-orm';
import type { ProductKind, ServicePricing } from '../../db/schema.js';
import { fromCents, toCents } from '../../lib/money.js';
import type { PriceFields } from '../campaigns/pricing.js';

/**
 * What one account pays (C24), in exact decimals: its tier's percent off the catalog price and the tier's own prices,
 * and the rate of its currency. The placement statement computes the same in SQL (accountPriceSql below); the
 * property test of test/properties holds the two to each other.
 */
export type PriceView = {
  /** The tier's percent off the catalog price, as numeric(5,2) text ('0' without a tier). */
  percentOff: string;
  /** The tier's own prices in the store currency, by priceKey. */
  overrides: ReadonlyMap<string, string>;
  /** Units of the account's currency per store-currency unit (numeric(18,8) text); null in the store currency. */
  rate: string | null;
};

/** The view of an account with no tier in the store currency: the catalog as it is. */
export const CATALOG_PRICES: PriceView = { percentOff: '0', overrides: new Map(), rate: null };

export const priceKey = (kind: ProductKind, serviceId: number) => `${kind}:${serviceId}`;

export const isCatalogPrice = (view: PriceView) => view.rate === null && view.overrides.size === 0 && toCents(view.percentOff) === 0;

const RATE_SCALE = 100_000_000n;

/** A rate as an integer count of 1e-8 units (numeric(18,8) as text, exactly). */
function rateUnits(rate: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,8}))?$/.exec(rate.trim());
  if (!match) throw new RangeError(`not a rate: ${rate}`);
  return BigInt(match[1]!) * RATE_SCALE + BigInt((match[2] ?? '').padEnd(8, '0'));
}

/** cents × factor / scale, rounded half-up (amounts here are never negative), as PostgreSQL's round(…, 2) does. */
function scaledHalfUp(cents: number, factor: bigint, scale: bigint): number {
  return Number((BigInt(cents) * factor * 2n + scale) / (2n * scale));
}

/** An amount in the store currency converted at the view's rate, rounded half-up to the cent. */
export function convertedCents(cents: number, view: PriceView): number {
  return view.rate === null ? cents : scaledHalfUp(cents, rateUnits(view.rate), RATE_SCALE);
}

/** The account's base price of a service before its currency: the tier's own price, else catalog × (1 − percent_off/100). */
export function tierPriceCents(kind: ProductKind, serviceId: number, catalogPrice: string, view: PriceView): number {
  const own = view.overrides.get(priceKey(kind, serviceId));
  if (own !== undefined) return toCents(own);
  return scaledHalfUp(toCents(catalogPrice), BigInt(10_000 - toCents(view.percentOff)), 10_000n);
}

/**
 * A service's pricing as the account sees it: regular pricing at the tier's price, a campaign's (`campaign`) the
 * same for everyone; both converted to the account's currency, a flat discount with them (a percentage is a
 * percentage in any currency). C6 then applies to these figures as to the catalog's.
 */
export function accountPricing(
  kind: ProductKind,
  serviceId: number,
  fields: PriceFields,
  view: PriceView,
  campaign: boolean,
): PriceFields {
  if (isCatalogPrice(view)) return fields;
  const base = campaign ? toCents(fields.price) : tierPriceCents(kind, serviceId, fields.price, view);
  const discount = fields.discountType === 'flat' ? convertedCents(toCents(fields.discount), view) : toCents(fields.discount);
  return { price: fromCents(convertedCents(base, view)), discount: fromCents(discount), discountType: fields.discountType };
}

/** A pricing snapshot (old_data, campaign_data) as the account sees it; max_sell and anything else kept. */
export function accountSnapshot(
  kind: ProductKind,
  serviceId: number,
  snapshot: ServicePricing,
  view: PriceView,
  campaign: boolean,
): ServicePricing {
  if (isCatalogPrice(view)) return snapshot;
  const priced = accountPricing(kind, serviceId, { price: snapshot.price, discount: snapshot.discount, discountType: snapshot.discount_type }, view, campaign);
  return { ...snapshot, price: priced.price, discount: priced.discount };
}

// ───────────────────────────── the same rule in SQL ─────────────────────────────

/**
 * The account's pricing columns, for a statement that joins `acct` (accountPricingSql) and the tier's own price `own`
 * (left join on price_tier_prices): price, discount and discount type of a service's regular (or, `campaign`,
 * campaign) pricing given as SQL expressions.
 */
export function accountPriceSql(price: SQL, discount: SQL, discountType: SQL, campaign: boolean) {
  const converted = (amount: SQL) => sql`case when acct.rate is null then ${amount} else round(${amount} * acct.rate, 2) end`;
  const base = campaign ? price : sql`coalesce(own.price, round(${price} * (100 - acct.percent_off) / 100, 2))`;
  return {
    price: converted(base),
    discount: sql`case when ${discountType} = 'flat' then ${converted(discount)} else ${discount} end`,
  };
}

/**
 * One row `acct` for an account: its tier, the tier's percent off (0 without), its currency and that currency's rate
 * (null: the store's), as the statement's snapshot sees them.
 */
export const accountPricingSql = (accountId: SQL) => sql`
  select a.price_tier_id, coalesce(t.percent_off, 0) as percent_off, a.currency, a.currency_symbol, cur.rate
  from accounts a
  left join price_tiers t on t.id = a.price_tier_id
  left join currencies cur on cur.code = a.currency
  where a.id = ${accountId}`;
