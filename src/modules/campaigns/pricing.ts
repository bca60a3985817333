import type { DiscountType, ServicePricing } from '../../db/schema.js';
import { fromCents, toCents } from '../../lib/money.js';

/** The price fields of a service row (or of its old_data / campaign_data snapshot). */
export type PriceFields = { price: string; discount: string; discountType: DiscountType };

/**
 * C6 unit price in cents: `price − discount` (flat) or `price × (1 − discount/100)` (percentage),
 * rounded half-up to 2 decimals and never below zero.
 */
export function unitPriceCents({ price, discount, discountType }: PriceFields): number {
  const priceCents = toCents(price);
  const unit =
    discountType === 'percentage'
      ? Math.round((priceCents * (10_000 - toCents(discount))) / 10_000)
      : priceCents - toCents(discount);
  return Math.max(0, unit);
}

/** The extended fields of C6: the discount in money and the price the buyer pays for one unit. */
export function discountFigures(fields: PriceFields) {
  const unit = unitPriceCents(fields);
  return {
    discountedAmount: (toCents(fields.price) - unit) / 100,
    discountedPriceWithoutDiscount: unit / 100,
  };
}

export const toSnapshot = (f: PriceFields, maxSell?: number): ServicePricing => ({
  price: fromCents(toCents(f.price)),
  discount: fromCents(toCents(f.discount)),
  discount_type: f.discountType,
  ...(maxSell === undefined ? {} : { max_sell: String(maxSell) }),
});
