/**
 * Domain-level fixture builders, the one place tests make rows: inserted straight through drizzle (license
 * rows through the license module, which stores codes as keyed digests), so a test starts from a known
 * catalog, order or license state without going through endpoints it does not exercise.
 */
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../src/db/client.js';
import {
  campaignCardServices,
  campaignTopUpServices,
  campaigns,
  cardServices,
  cards,
  categories,
  gateways,
  orderLines,
  orders,
  reviews,
  topUpServices,
  topUps,
  type CategoryType,
  type DiscountType,
  type MediaKind,
  type OrderField,
  type OrderFieldValue,
  type OrderStatusCode,
  type ProductKind,
} from '../../src/db/schema.js';
import { toSnapshot, unitPriceCents } from '../../src/modules/campaigns/pricing.js';
import { createItem, createPurchase, type LicenseItem, type NewPurchase } from '../../src/modules/license/service.js';
import { fromCents, toCents } from '../../src/lib/money.js';
import { utcToday } from '../../src/lib/time.js';

const unique = () => randomBytes(4).toString('hex');

export type ServiceInput = {
  name?: string;
  price?: string;
  discount?: string;
  discountType?: DiscountType;
  status?: number;
  sortBy?: number;
  image?: string;
};

const serviceValues = (s: ServiceInput, i: number) => ({
  name: s.name ?? `Service ${i + 1}`,
  price: s.price ?? '10.00',
  discount: s.discount ?? '0',
  discountType: s.discountType ?? 'flat',
  status: s.status ?? 1,
  sortBy: s.sortBy ?? i,
  image: s.image ?? `services/service-${i + 1}.webp`,
});

export async function createCategory(
  db: DbOrTx,
  input: { type?: CategoryType; name?: string; icon?: string; status?: number } = {},
) {
  const [row] = await db
    .insert(categories)
    .values({
      name: input.name ?? `Category ${unique()}`,
      icon: input.icon ?? 'fas fa-gamepad',
      type: input.type ?? 'top_up',
      status: input.status ?? 1,
    })
    .returning();
  return row!;
}

const productImage = (kind: string, slug: string) => ({
  image: `${kind}/${slug}.webp`,
  image_driver: 'local',
  preview: `${kind}/${slug}-preview.webp`,
  preview_driver: 'local',
});

export type ProductInput = {
  categoryId?: number;
  name?: string;
  slug?: string;
  status?: number;
  region?: string;
  note?: string | null;
  deletedAt?: string | null;
  description?: string;
  guide?: string;
  /** 1 = services by date (default), 2 = by price. */
  sortBy?: number;
};

/** The columns both product tables take from a ProductInput, with a product's own image set under `dir`. */
const productValues = (input: ProductInput, categoryId: number, slug: string, dir: string) => ({
  categoryId,
  slug,
  region: input.region ?? 'Global',
  note: input.note ?? null,
  status: input.status ?? 1,
  image: productImage(dir, slug),
  deletedAt: input.deletedAt ?? null,
  sortBy: input.sortBy ?? 1,
});

/** A top-up (its category is created when not given) with its services; one 10.00 service by default. */
export async function createTopUp(
  db: DbOrTx,
  input: ProductInput & { orderFields?: OrderField[]; services?: ServiceInput[]; instantDelivery?: number } = {},
) {
  const categoryId = input.categoryId ?? (await createCategory(db, { type: 'top_up' })).id;
  const slug = input.slug ?? `top-up-${unique()}`;
  const [topUp] = await db
    .insert(topUps)
    .values({
      ...productValues(input, categoryId, slug, 'topups'),
      name: input.name ?? `Top-up ${slug}`,
      instantDelivery: input.instantDelivery ?? 1,
      orderInformation: input.orderFields ?? [],
      description: input.description ?? '<p>Top up in seconds.</p>',
      guide: input.guide ?? '<p>Enter your player ID.</p>',
    })
    .returning();
  const specs = input.services ?? [{}];
  const services = specs.length
    ? await db
        .insert(topUpServices)
        .values(specs.map((s, i) => ({ ...serviceValues(s, i), topUpId: topUp!.id })))
        .returning()
    : [];
  return { ...topUp!, services };
}

/** A card (its category is created when not given) with its services; one 10.00 service by default. */
export async function createCard(
  db: DbOrTx,
  input: ProductInput & { services?: ServiceInput[]; sellCount?: number; trending?: number } = {},
) {
  const categoryId = input.categoryId ?? (await createCategory(db, { type: 'card' })).id;
  const slug = input.slug ?? `card-${unique()}`;
  const [card] = await db
    .insert(cards)
    .values({
      ...productValues(input, categoryId, slug, 'cards'),
      name: input.name ?? `Card ${slug}`,
      description: input.description ?? '<p>A digital gift card.</p>',
      guide: input.guide ?? '<p>Redeem the code in the store.</p>',
      sellCount: input.sellCount ?? 0,
      trending: input.trending ?? 0,
    })
    .returning();
  const specs = input.services ?? [{}];
  const services = specs.length
    ? await db
        .insert(cardServices)
        .values(specs.map((s, i) => ({ ...serviceValues(s, i), cardId: card!.id })))
        .returning()
    : [];
  return { ...card!, services };
}

/** A card 'Card' with one service 'Card <price>', for tests that only need the two ids. */
export async function createCardService(db: DbOrTx, price = '10.00') {
  const card = await createCard(db, { name: 'Card', services: [{ name: `Card ${price}`, price }] });
  return { cardId: card.id, serviceId: card.services[0]!.id };
}

/** A top-up 'Game' with one service 'Game <price>' (the names a provider receives), for tests that only need the two ids. */
export async function createTopUpService(db: DbOrTx, price = '5.00') {
  const topUp = await createTopUp(db, { name: 'Game', services: [{ name: `Game ${price}`, price }] });
  return { topUpId: topUp.id, serviceId: topUp.services[0]!.id };
}

export type CampaignServiceInput = {
  serviceId: number;
  price: string;
  discount?: string;
  discountType?: DiscountType;
  maxSell?: number;
};

/** The UTC date `days` from today (negative: in the past). */
export const shiftDays = (days: number) => utcToday(new Date(Date.now() + days * 86_400_000));

/**
 * A campaign with its members, already started as C9 describes: each service keeps its own pricing in
 * `old_data`, takes the campaign pricing in its price fields and `campaign_data` (strings), `is_offered = 1`
 * and the campaign's `max_sell`. Defaults: active from yesterday to a week ahead, max_sell 50.
 * With `applied: false` only the campaign and its members are written, services untouched, as an operator
 * leaves it for the campaign sync to start.
 */
export async function createCampaign(
  db: DbOrTx,
  input: {
    name?: string;
    start?: string;
    end?: string;
    status?: number;
    maxSell?: number;
    applied?: boolean;
    topUpServices?: CampaignServiceInput[];
    cardServices?: CampaignServiceInput[];
  } = {},
) {
  const [campaign] = await db
    .insert(campaigns)
    .values({
      name: input.name ?? `Campaign ${unique()}`,
      startDate: input.start ?? shiftDays(-1),
      endDate: input.end ?? shiftDays(7),
      status: input.status ?? 1,
    })
    .returning();
  const member = (s: CampaignServiceInput) => ({
    campaignId: campaign!.id,
    price: s.price,
    discount: s.discount ?? '0',
    discountType: s.discountType ?? ('flat' as const),
    maxSell: s.maxSell ?? input.maxSell ?? 50,
  });
  const applied = input.applied ?? true;
  for (const s of input.topUpServices ?? []) {
    const m = member(s);
    await db.insert(campaignTopUpServices).values({ ...m, topUpServiceId: s.serviceId });
    if (applied) await applyCampaignPricing(db, topUpServices, s.serviceId, m, campaign!.id);
  }
  for (const s of input.cardServices ?? []) {
    const m = member(s);
    await db.insert(campaignCardServices).values({ ...m, cardServiceId: s.serviceId });
    if (applied) await applyCampaignPricing(db, cardServices, s.serviceId, m, campaign!.id);
  }
  return campaign!;
}

async function applyCampaignPricing(
  db: DbOrTx,
  table: typeof topUpServices | typeof cardServices,
  serviceId: number,
  m: { price: string; discount: string; discountType: DiscountType; maxSell: number },
  campaignId: number,
) {
  const [current] = await db.select().from(table).where(eq(table.id, serviceId));
  if (!current) throw new Error(`no service ${serviceId}`);
  await db
    .update(table)
    .set({
      oldData: toSnapshot(current),
      campaignData: toSnapshot(m, m.maxSell),
      price: m.price,
      discount: m.discount,
      discountType: m.discountType,
      isOffered: 1,
      campaignId,
      maxSell: m.maxSell,
      updatedAt: sql`now()`,
    })
    .where(eq(table.id, serviceId));
}

export async function createGateway(
  db: DbOrTx,
  input: { code?: string; name?: string; status?: number; sortBy?: number; image?: string } = {},
) {
  const code = input.code ?? `gw-${unique()}`;
  const [row] = await db
    .insert(gateways)
    .values({
      code,
      name: input.name ?? `Gateway ${code}`,
      sortBy: input.sortBy ?? 1,
      image: input.image ?? `gateways/${code}.webp`,
      status: input.status ?? 1,
      parameters: { merchant_name: 'Demo Store' },
      currencies: { '0': { USD: 'USD', EUR: 'EUR' } },
      extraParameters: null,
      supportedCurrency: ['USD', 'EUR'],
      receivableCurrencies: [
        {
          name: 'USD',
          currency_symbol: 'USD',
          conversion_rate: '1.00',
          min_limit: '1',
          max_limit: '10000',
          percentage_charge: '0',
          fixed_charge: '0',
        },
      ],
      description: 'Pay with your balance.',
      currencyType: 1,
      isSandbox: 0,
      environment: 'live',
      isManual: null,
      note: null,
    })
    .returning();
  return row!;
}

/** Which product an order is of: top-up orders name the top-up on the order, card orders name the card on the line. */
type OrderProduct = { topUpId: number; cardId?: never } | { cardId: number; topUpId?: never };

export type OrderInput = OrderProduct & {
  accountId: number;
  /** The service of that product on the order's one line. */
  serviceId: number;
  /** 0 (accepted: paid, not yet delivered) by default. */
  status?: OrderStatusCode;
  quantity?: number;
  /** What the buyer paid a unit; 10.00 by default. */
  unitPrice?: string;
  /** The service price before its discount; the unit price (no discount) by default. */
  basePrice?: string;
  /** Top-up orders: what the buyer filled in; one player id by default. */
  informations?: Record<string, string>;
  /** Top-up orders: the same values as suppliers get them (orders.fields); none by default (read from `informations`). */
  fields?: OrderFieldValue[];
  /** Card orders: codes still owed (a stock_short order). */
  codesOwed?: number;
};

const ORDER_UNIT_PRICE = '10.00';

/**
 * An order with one line inserted directly, already paid, so operator and fulfilment tests need no buyer flow
 * and can start from any status.
 */
export async function createOrder(db: DbOrTx, input: OrderInput) {
  const topUp = input.topUpId !== undefined;
  const quantity = input.quantity ?? 1;
  const unit = input.unitPrice ?? ORDER_UNIT_PRICE;
  const base = input.basePrice ?? unit;
  const total = fromCents(toCents(unit) * quantity);
  const [order] = await db
    .insert(orders)
    .values({
      utr: `T${unique()}${unique()}`.toUpperCase(),
      accountId: input.accountId,
      kind: topUp ? 'top_up' : 'card',
      topUpId: input.topUpId ?? null,
      status: input.status ?? 0,
      total,
      currency: 'USD',
      currencySymbol: '$',
      informations: topUp ? (input.informations ?? { 'Player id': '12345' }) : null,
      fields: input.fields ?? null,
    })
    .returning();
  await db.insert(orderLines).values({
    orderId: order!.id,
    topUpServiceId: topUp ? input.serviceId : null,
    cardServiceId: topUp ? null : input.serviceId,
    cardId: input.cardId ?? null,
    quantity,
    basePrice: base,
    discount: fromCents(toCents(base) - toCents(unit)),
    unitPrice: unit,
    lineTotal: total,
    codesOwed: input.codesOwed ?? 0,
  });
  return order!;
}

/**
 * A completed order (by default) of one product by an account, priced as the product's first service sells now
 * (its discount or campaign price applied).
 */
export async function createOrderFor(db: DbOrTx, accountId: number, input: OrderProduct & { status?: OrderStatusCode }) {
  const [service] =
    input.topUpId !== undefined
      ? await db.select().from(topUpServices).where(eq(topUpServices.topUpId, input.topUpId)).orderBy(topUpServices.id).limit(1)
      : await db.select().from(cardServices).where(eq(cardServices.cardId, input.cardId)).orderBy(cardServices.id).limit(1);
  if (!service) throw new Error('the product has no service to order');
  return createOrder(db, {
    ...input,
    accountId,
    serviceId: service.id,
    status: input.status ?? 1,
    basePrice: service.price,
    unitPrice: fromCents(unitPriceCents(service)),
    informations: {},
  });
}

/** An accepted top-up order of a new top-up service priced at the order's unit price. */
export async function createTopUpOrder(db: DbOrTx, input: Omit<OrderInput, 'topUpId' | 'cardId' | 'serviceId' | 'codesOwed'>) {
  const topUp = await createTopUpService(db, input.unitPrice ?? ORDER_UNIT_PRICE);
  return { ...(await createOrder(db, { ...input, ...topUp })), ...topUp };
}

/** A review inserted directly (no purchase check): for list and count tests. */
export async function createReview(
  db: DbOrTx,
  input: { accountId: number; kind: ProductKind; productId: number; rating?: number; comment?: string; status?: number },
) {
  const [row] = await db
    .insert(reviews)
    .values({
      accountId: input.accountId,
      reviewableType: input.kind,
      reviewableId: input.productId,
      rating: String(input.rating ?? 5),
      comment: input.comment ?? 'Great service.',
      status: input.status ?? 1,
    })
    .returning();
  return row!;
}

/** A license item of `kind` owned by `accountId`; every preview column is filled so the response rules are what hide them. */
export async function createLicenseItem(db: DbOrTx, accountId: number, kind: MediaKind, screenshots: string[] = []): Promise<LicenseItem> {
  return createItem(db, {
    accountId,
    name: `${kind} item`,
    description: `A ${kind} item`,
    category: 'Templates',
    subCategory: 'Landing',
    options: ['Light', 'Dark'],
    version: '1.2.3',
    demoLink: 'https://demo.example.com/item',
    tags: ['one', 'two'],
    mediaKind: kind,
    thumbnail: 'items/thumb.jpg',
    previewImage: 'items/preview.jpg',
    previewVideo: 'items/preview.mp4',
    previewAudio: 'items/preview.mp3',
    screenshots,
    priceRegular: '24.50',
    priceExtended: '120.00',
    currency: 'USD',
  });
}

/** A purchase of a license item, stored under `key` (the code encryption key) as the app stores it; returns its code. */
export async function createLicensePurchase(db: DbOrTx, key: Buffer, input: NewPurchase): Promise<string> {
  const created = await createPurchase(db, key, input);
  return created!.purchaseCode;
}
