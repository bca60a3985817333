import type { AssetUrl } from '../../http/urls.js';
import type { OrderEntry } from './listing.js';

/**
 * An order entry around its `order_details` (spec §2 Order), written as one object literal: with the shared fields
 * spread into it, presenting a page took 7% of an order list's CPU and its entries were slower to stringify.
 */
function presentOrder<D>(e: OrderEntry, orderDetails: D[]) {
  return {
    utr: e.utr,
    price: e.price,
    currency: e.currency,
    symbol: e.symbol,
    rate: e.rate,
    livemode: e.livemode,
    status: e.status,
    status_label: e.status_label,
    dateTime: e.dateTime,
    order_details: orderDetails,
    informations: e.informations,
    review_user_info: e.review_user_info,
  };
}

/** A top-up order entry of A15 (spec §2 Order). */
export function presentTopUpOrder(asset: AssetUrl, e: OrderEntry) {
  return presentOrder(
    e,
    e.lines.map((l) => ({
      utr: e.utr,
      rating: l.rating,
      image: asset(l.image.image),
      discount: l.discount,
      quantity: l.quantity,
      name: l.productName,
      service: l.service,
      base_price: l.basePrice,
      currency: e.currency,
      symbol: e.symbol,
      slug: l.slug,
    })),
  );
}

const stockShort = (owed: number) =>
  owed === 0 ? '' : `${owed} ${owed === 1 ? 'code' : 'codes'} will be sent as soon as stock arrives.`;

/** A card order entry of A16, with the codes delivered so far (spec §2 Order). */
export function presentCardOrder(asset: AssetUrl, e: OrderEntry) {
  return presentOrder(
    e,
    e.lines.map((l) => ({
      utr: e.utr,
      id: l.productId,
      rating: l.rating,
      image: asset(l.image.image),
      card: l.productName,
      slug: l.slug,
      service: l.service,
      base_price: l.basePrice,
      currency: e.currency,
      symbol: e.symbol,
      discount: l.discount,
      quantity: l.quantity,
      card_codes: l.codes,
      stock_short: stockShort(l.codesOwed),
    })),
  );
}
