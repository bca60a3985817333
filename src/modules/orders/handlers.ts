import type { Context } from 'hono';
import { readBody } from '../../http/body.js';
import type { AppEnv } from '../../http/context.js';
import { validationError } from '../../errors.js';
import { enqueueFulfilment } from '../../queues/index.js';
import { pageObject } from '../../http/pagination.js';
import { pageRequest } from '../../lib/paging.js';
import { success } from '../../http/respond.js';
import { assetUrl } from '../../http/urls.js';
import { validate } from '../../http/validation.js';
import { isBlank } from '../../lib/text.js';
import { moneyNumber } from '../../lib/money.js';
import type { ProductKind } from '../../db/schema.js';
import { openCode } from '../inventory/codes.js';
import { listOrders, type OrderEntry } from './listing.js';
import { cardOrderBody, orderListQuery, topUpOrderBody } from './schemas.js';
import { placeCardOrder, placeTopUpOrder, type PlacementDeps } from './place.js';

/** C15: the optional Idempotency-Key header, 1–255 characters. */
function idempotencyKey(c: Context<AppEnv>): string | null {
  const key = c.req.header('idempotency-key');
  if (key === undefined) return null;
  if (key.length < 1 || key.length > 255) throw validationError(['The Idempotency-Key header must be between 1 and 255 characters.']);
  return key;
}

const placement = (c: Context<AppEnv>): PlacementDeps => {
  const { db, logger, queues } = c.var.services;
  return { db, logger, enqueue: enqueueFulfilment(queues) };
};

/** A6 POST top-up/make-order. */
export async function makeTopUpOrder(c: Context<AppEnv>) {
  const body = await readBody(c);
  const key = idempotencyKey(c);
  const { topUpId, serviceId } = validate(topUpOrderBody, body);
  const { utr } = await placeTopUpOrder(placement(c), { accountId: c.var.account.id, topUpId, serviceId, fields: body, idempotencyKey: key });
  return success(c, `Order placed successfully. Your order number is ${utr}.`);
}

/** Either spelling of a card order list field (C5); a single value reads as a list of one. */
const listField = (body: Record<string, unknown>, ...names: string[]) => {
  const value = names.map((n) => body[n]).find((v) => !isBlank(v));
  return value === undefined || Array.isArray(value) || typeof value === 'object' ? value : [value];
};

/** A12 POST card/make-order. */
export async function makeCardOrder(c: Context<AppEnv>) {
  const body = await readBody(c);
  const key = idempotencyKey(c);
  const { service_ids: serviceIds, quantities } = validate(cardOrderBody, {
    service_ids: listField(body, 'service_ids', 'serviceIds'),
    quantities: listField(body, 'quantities', 'quantity'),
  });
  if (serviceIds.length !== quantities.length) {
    throw validationError(['The service ids and quantities fields must have the same number of items.']);
  }
  const { utr } = await placeCardOrder(placement(c), {
    accountId: c.var.account.id,
    lines: serviceIds.map((serviceId, i) => ({ serviceId, quantity: quantities[i]! })),
    idempotencyKey: key,
    maxQuantityPerLine: c.var.services.config.MAX_QUANTITY_PER_LINE,
  });
  return success(c, { utr });
}

/** A15/A16 (+ C1 aliases): the caller's orders of one kind. */
export function listOrdersHandler(kind: ProductKind) {
  return async (c: Context<AppEnv>) => {
    const query = validate(orderListQuery, c.req.query(), 'query');
    const page = pageRequest(query, 10);
    const { db, config } = c.var.services;
    const { total, entries } = await listOrders(db, c.var.account.id, kind, page, (sealed) =>
      openCode(config.codeEncryptionKey, sealed),
    );
    const present = kind === 'top_up' ? presentTopUpOrder : presentCardOrder;
    return success(c, pageObject(c, 'data', entries.map((e) => present(c, e)), total, page));
  };
}

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

function presentTopUpOrder(c: Context<AppEnv>, e: OrderEntry) {
  return {
    ...orderFields(e),
    order_details: e.lines.map((l) => ({
      utr: e.utr,
      rating: moneyNumber(l.rating),
      image: assetUrl(c, l.image.image),
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

function presentCardOrder(c: Context<AppEnv>, e: OrderEntry) {
  return {
    ...orderFields(e),
    order_details: e.lines.map((l) => ({
      utr: e.utr,
      id: l.productId,
      rating: moneyNumber(l.rating),
      image: assetUrl(c, l.image.image),
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
