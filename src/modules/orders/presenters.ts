import { moneyNumber } from '../../lib/money.js';
import type { AssetUrl } from '../../http/urls.js';
import type { OrderEntry } from './listing.js';

function orderFields(e: OrderEntry) {
  return {
    utr: e.utr,
    price: e.price,
    currency: e.currency,
    symbol: e.symbol,
    status: e.status,
    status_label: e.status_label,
    dateTime: e.dateTime,
  };
}

/** A top-up order entry of A15 (spec §2 Order). */
export function presentTopUpOrder(asset: AssetUrl, e: OrderEntry) {
  return {
    ...orderFields(e),
    order_details: e.lines.map((l) => ({
      utr: e.utr,
      rating: moneyNumber(l.rating),
      image: asset(l.image.image),
      discount: moneyNumber(l.discount),
      quantity: l.quantity,
      name: l.productName,
      service: l.service,
      base_price: moneyNumber(l.basePrice),
      currency: e.currency,
      symbol: e.symbol,
      slug: l.slug,
    })),
    informations: e.informations,
    review_user_info: e.review_user_info,
  };
}

const stockShort = (owed: number) =>
  owed === 0 ? '' : `${owed} ${owed === 1 ? 'code' : 'codes'} will be sent as soon as stock arrives.`;

/** A card order entry of A16, with the codes delivered so far (spec §2 Order). */
export function presentCardOrder(asset: AssetUrl, e: OrderEntry) {
  return {
    ...orderFields(e),
    order_details: e.lines.map((l) => ({
      utr: e.utr,
      id: l.productId,
      rating: moneyNumber(l.rating),
      image: asset(l.image.image),
      card: l.productName,
      slug: l.slug,
      service: l.service,
      base_price: moneyNumber(l.basePrice),
      currency: e.currency,
      symbol: e.symbol,
      discount: moneyNumber(l.discount),
      quantity: l.quantity,
      card_codes: l.codes,
      stock_short: stockShort(l.codesOwed),
    })),
    informations: e.informations,
    review_user_info: e.review_user_info,
  };
}
