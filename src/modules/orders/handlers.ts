import type { Context } from 'hono';
import { readBody } from '../../http/body.js';
import type { AppEnv } from '../../http/context.js';
import { validationError } from '../../errors.js';
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
import {
  checkCardOrder,
  checkTopUpOrder,
  mergeCardLines,
  newUtr,
  placeOrder,
  requestDigest,
  type Idempotency,
  type PlaceOrder,
} from './service.js';

/** C15: the optional Idempotency-Key header, 1–255 characters. */
function idempotencyKey(c: Context<AppEnv>): string | null {
  const key = c.req.header('idempotency-key');
  if (key === undefined) return null;
  if (key.length < 1 || key.length > 255) throw validationError(['The Idempotency-Key header must be between 1 and 255 characters.']);
  return key;
}

/** The order is committed before it is enqueued: a Redis that hangs must not hold the answer back. */
const ENQUEUE_TIMEOUT_MS = 2000;

async function withinMs<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Places the order, then hands it to fulfilment; a queue outage is logged and left to the reconciler. */
async function place(
  c: Context<AppEnv>,
  key: string | null,
  order: Omit<PlaceOrder, 'idempotency' | 'accountId'>,
  request: unknown,
  endpoint: string,
) {
  const { db, queues, logger } = c.var.services;
  const idempotency: Idempotency | null = key ? { key, endpoint, digest: requestDigest(endpoint, request) } : null;
  const result = await placeOrder(db, { ...order, accountId: c.var.account.id, idempotency });
  if (result.kind === 'replayed') return c.json(result.body as object, result.status as 200);
  try {
    await withinMs(ENQUEUE_TIMEOUT_MS, queues.fulfilment.add('fulfil', { orderId: result.orderId, utr: result.utr }, { jobId: result.utr }));
  } catch (err) {
    logger.warn({ utr: result.utr, err }, 'order enqueue failed; the reconciler will pick it up');
  }
  return c.json(order.response as object, 200);
}

/** A6 POST top-up/make-order. */
export async function makeTopUpOrder(c: Context<AppEnv>) {
  const body = await readBody(c);
  const key = idempotencyKey(c);
  const { topUpId, serviceId } = validate(topUpOrderBody, body);
  const { informations } = await checkTopUpOrder(c.var.services.db, { topUpId, serviceId, fields: body });
  const utr = newUtr('top_up');
  return place(
    c,
    key,
    {
      kind: 'top_up',
      utr,
      topUpId,
      informations,
      lines: [{ serviceId, quantity: 1, cardId: null }],
      response: { status: 'success', message: `Order placed successfully. Your order number is ${utr}.` },
    },
    { topUpId, serviceId, informations },
    'top-up/make-order',
  );
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
  const requested = mergeCardLines(serviceIds.map((serviceId, i) => ({ serviceId, quantity: quantities[i]! })));
  const max = c.var.services.config.MAX_QUANTITY_PER_LINE;
  if (requested.some((l) => l.quantity > max)) throw validationError([`The quantities field must not be greater than ${max}.`]);
  const lines = await checkCardOrder(c.var.services.db, requested);
  const utr = newUtr('card');
  return place(
    c,
    key,
    { kind: 'card', utr, topUpId: null, informations: null, lines, response: { status: 'success', message: { utr } } },
    { service_ids: serviceIds, quantities },
    'card/make-order',
  );
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
