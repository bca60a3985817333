import { z } from '@hono/zod-openapi';
import { EXAMPLE_CURRENCY, EXAMPLE_TIMESTAMP, exampleAsset, examplePage } from '../../http/examples.js';
import { flagField, maxPriceField } from '../../http/fields.js';
import { pageSchema } from '../../http/pagination.js';
import { aliased, id, pageQuery, positiveCount, REQUIRED, requiredText } from '../../http/validation.js';
import { fromCents, moneyNumber } from '../../lib/money.js';
import type { DemoProduct } from '../../demo/catalog.js';
import { discountFigures, unitPriceCents } from '../campaigns/pricing.js';
import { DEMO_KINDS, demoPricing, demoProductImages, demoRatings, pubg, pubgCampaignService, steam } from '../catalog/examples.js';

// Examples: orders of the demo store (src/demo/catalog.ts) by a new account.
const EXAMPLE_UTR = { top_up: 'T0MWT6AW6V90F0B0E11FEC9DCD', card: 'C0MWT6AW5N89FD612DA6B49BED' };
/** Codes in the shape of the demo codes (the card's prefix, then four groups of hex digits); two per line at most. */
const EXAMPLE_CODES = ['STEA-02E2-E335-DC87-5DDE', 'STEA-7F3A-91C2-0B5D-44A1', 'STEA-C90B-1D4E-6F28-A370'];
/** The first demo top-up's campaign service (pubgCampaignService) is ordered with every order field filled in. */
const pubgOrderFields = Object.fromEntries(pubg!.orderFields.map((f) => [f.field_name, f.option ? Object.keys(f.option)[0]! : '5123456789']));
/** Card lines by service position: two of the campaign's Steam card, one of the first. */
const steamLines = [
  { n: steam!.services.findIndex((s) => s.campaign) + 1, quantity: 2 },
  { n: 1, quantity: 1 },
];

/** An order line's price figures: the service as ordered (its campaign pricing while in the campaign). */
function lineFigures(product: DemoProduct, n: number, quantity: number) {
  const service = product.services[n - 1]!;
  const { current } = demoPricing(service);
  return {
    service: service.name,
    base_price: moneyNumber(current.price),
    discount: discountFigures(current).discountedAmount,
    quantity,
    cents: unitPriceCents(current) * quantity,
    ...EXAMPLE_CURRENCY,
    rating: demoRatings(product).avg_rating,
    slug: product.slug,
  };
}
const orderPrice = (lines: Array<{ cents: number }>) => moneyNumber(fromCents(lines.reduce((sum, line) => sum + line.cents, 0)));

/** A6 body: the ids, plus one field per `order_information` entry of the top-up (checked against the catalog). */
export const topUpOrderBody = z
  .looseObject({
    topUpId: id(),
    serviceId: id(),
    max_price: maxPriceField,
    check_player: flagField()
      .optional()
      .openapi({ type: 'boolean', description: 'Refuse (422) fields the player check (`POST /api/top-up/check-player`) calls invalid, before any money moves (C27)' }),
  })
  .openapi({
    description: 'Plus one text field per `order_information` entry of the top-up, named by its `field_name`.',
    example: { topUpId: 1, serviceId: pubgCampaignService, ...pubgOrderFields },
  });

const MAX_LINES = 100;
const lineList = <T extends z.ZodType>(item: T) =>
  z
    .array(item, { error: 'must be an array.' })
    .min(1, { error: REQUIRED })
    .max(MAX_LINES, { error: `must not have more than ${MAX_LINES} items.` });

/** A12's two lists, each as the body schema checks it (also read on their own: withCatalogChecks). */
export const cardOrderLists = { service_ids: lineList(id()), quantities: lineList(positiveCount()) };

/**
 * A12 body (C5): `service_ids` or `serviceIds`, `quantities` or `quantity`, each a list. Quantities are bounded per
 * line by MAX_QUANTITY_PER_LINE after equal services are merged (placeCardOrder).
 */
export const cardOrderBody = aliased(
  { serviceIds: 'service_ids', quantity: 'quantities' },
  z
    .object({ ...cardOrderLists, max_price: maxPriceField })
    .refine((body) => body.service_ids.length === body.quantities.length, {
      path: ['service_ids'],
      error: 'The service ids and quantities fields must have the same number of items.',
    })
    .openapi({
      description:
        'Also accepted: `serviceIds` and `quantity` (the spec samples), and form fields `service_ids[]=…`. At most MAX_QUANTITY_PER_LINE (default 100) of one service.',
      example: { service_ids: steamLines.map((line) => line.n), quantities: steamLines.map((line) => line.quantity) },
    }),
);

/** C15: the optional Idempotency-Key header. */
export const idempotencyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .min(1, { error: 'The Idempotency-Key header must be between 1 and 255 characters.' })
    .max(255, { error: 'The Idempotency-Key header must be between 1 and 255 characters.' })
    .optional()
    .openapi({ description: 'Repeat a request safely for 24 h: the same key and body get the first order (C15).', example: '2f1c7a9e-order-1' }),
});

/** C18: one order by its utr (the utr shape of placement: letters and digits). */
export const orderDetailsQuery = z.object({
  utr: requiredText(64).openapi({ example: 'C0MWT6AW5N89FD612DA6B49BED' }),
});

/**
 * A15/A16 query (C11). `after`: the utr of the last order of the page before, as `next_page_url` carries it; the page is
 * then read on from that order (keyset) instead of counted from the newest, as fast at page 10,000 as at page 2. An
 * `after` that is not an order of this list is left aside: `page` alone says which page.
 */
export const orderListQuery = z.object({
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
  after: requiredText(64)
    .optional()
    .openapi({ description: "The utr of the last order of the page before (next_page_url carries it): the page is read on from that order", example: 'C0MWT6AW5N89FD612DA6B49BED' }),
});

// ───────────────────────────── responses (spec §2 Order) ─────────────────────────────

const money = z.number();

const orderFields = {
  utr: z.string().openapi({ example: 'C0MWT6AW5N89FD612DA6B49BED' }),
  price: money,
  currency: z.string(),
  symbol: z.string(),
  rate: z
    .string()
    .optional()
    .openapi({ description: "C24: the rate the order's prices were converted at (units of its currency per store-currency unit); absent in the store currency", example: '0.92000000' }),
  livemode: z.literal(false).optional().openapi({ description: 'C25: false on an order placed with a test key (seen only by test tokens); absent on live orders' }),
  status: z.number().int().openapi({ description: '0 initiate, 1 completed, 2 refund, 3 stock_short' }),
  status_label: z.enum(['initiate', 'completed', 'refund', 'stock_short']),
  dateTime: z.string(),
  review_user_info: z.array(
    z.object({ review: z.object({ comment: z.string().nullable(), rating: z.number().nullable(), status: z.enum(['active', 'inactive']) }) }),
  ),
};

const lineFields = {
  utr: z.string(),
  rating: z.number(),
  image: z.string(),
  discount: money,
  quantity: z.number().int(),
  service: z.string(),
  base_price: money,
  currency: z.string(),
  symbol: z.string(),
  slug: z.string(),
};

/** The example top-up order, waiting for its provider. */
function topUpOrderExample() {
  const { cents, ...line } = lineFigures(pubg!, pubgCampaignService, 1);
  const utr = EXAMPLE_UTR.top_up;
  return {
    utr,
    price: orderPrice([{ cents }]),
    ...EXAMPLE_CURRENCY,
    status: 0,
    status_label: 'initiate' as const,
    dateTime: EXAMPLE_TIMESTAMP,
    order_details: [{ utr, ...line, image: exampleAsset(demoProductImages(DEMO_KINDS.top_up, pubg!).image), name: pubg!.name }],
    informations: Object.fromEntries(pubg!.orderFields.map((f) => [f.field_value, pubgOrderFields[f.field_name]!])),
    review_user_info: [],
  };
}

/** The example card order, completed: each line with its codes. */
function cardOrderExample() {
  const utr = EXAMPLE_UTR.card;
  const lines = steamLines.map(({ n, quantity }) => lineFigures(steam!, n, quantity));
  return {
    utr,
    price: orderPrice(lines),
    ...EXAMPLE_CURRENCY,
    status: 1,
    status_label: 'completed' as const,
    dateTime: EXAMPLE_TIMESTAMP,
    order_details: lines.map(({ cents: _cents, ...line }, i) => ({
      utr,
      ...line,
      id: 1,
      image: exampleAsset(demoProductImages(DEMO_KINDS.card, steam!).image),
      card: steam!.name,
      card_codes: EXAMPLE_CODES.slice(i * 2, i * 2 + line.quantity),
      stock_short: '',
    })),
    informations: [],
    review_user_info: [],
  };
}

export const TopUpOrder = z
  .object({
    ...orderFields,
    order_details: z.array(z.object({ ...lineFields, name: z.string() })),
    informations: z.record(z.string(), z.string()).openapi({ description: 'Form label → the value given' }),
  })
  .openapi('TopUpOrder', { example: topUpOrderExample() });

export const CardOrder = z
  .object({
    ...orderFields,
    order_details: z.array(
      z.object({
        ...lineFields,
        id: z.number().int(),
        card: z.string(),
        card_codes: z.array(z.string()).openapi({ description: 'The delivered codes' }),
        stock_short: z.string().openapi({ description: 'Codes still to be sent, empty when none' }),
      }),
    ),
    informations: z.array(z.string()).max(0).openapi({ description: 'Always empty for cards' }),
  })
  .openapi('CardOrder', { example: cardOrderExample() });

/** A15 and A16: a page of orders, newest first. */
export const TopUpOrderPage = pageSchema('data', TopUpOrder).openapi({ example: examplePage('/api/get-topup/orders', 'data', [topUpOrderExample()]) });
export const CardOrderPage = pageSchema('data', CardOrder).openapi({ example: examplePage('/api/get-card/orders', 'data', [cardOrderExample()]) });

/** A12's answer: the order's utr, at once (the codes follow in the card order list). */
export const PlacedCardOrder = z.object({ utr: z.string().openapi({ example: EXAMPLE_UTR.card }) });

/** C18: the entry of the order lists, of whichever kind the order is. */
export const AnyOrder = z.union([TopUpOrder, CardOrder]).openapi('Order');

/** C27: the top-up and service, and the order fields, as make-order takes them. */
export const checkPlayerBody = z
  .looseObject({ topUpId: id(), serviceId: id() })
  .openapi({
    description: 'Plus one field per `order_information` entry of the top-up, named by its `field_name`, as in make-order.',
    example: { topUpId: 1, serviceId: pubgCampaignService, ...pubgOrderFields },
  });

export const PlayerCheckAnswer = z
  .object({
    valid: z.boolean(),
    nickname: z.string().optional().openapi({ description: "The player's name, as the provider knows it" }),
    reason: z.string().optional().openapi({ description: 'Why the provider calls the fields invalid' }),
    checked_by: z.enum(['provider', 'form']).openapi({ description: '`form`: no provider could look the player up, only the order form was checked' }),
  })
  .openapi('PlayerCheck', { example: { valid: true, nickname: 'Sniper_77', checked_by: 'provider' } });
