import { z } from '@hono/zod-openapi';
import { id, pageQuery, positiveInt } from '../../http/validation.js';
import { isBlank } from '../../lib/text.js';

/** A6 body: the ids, plus one field per `order_information` entry of the top-up (checked against the catalog). */
export const topUpOrderBody = z
  .looseObject({ topUpId: id(), serviceId: id() })
  .openapi({ description: 'Plus one text field per `order_information` entry of the top-up, named by its `field_name`.' });

const MAX_LINES = 100;
const lineList = <T extends z.ZodType>(item: T) =>
  z.array(item, { error: 'must be an array.' }).max(MAX_LINES, { error: `must not have more than ${MAX_LINES} items.` });

/**
 * A12 body as sent: `service_ids` or `serviceIds`, `quantities` or `quantity` (C5), each a list (JSON array,
 * or repeated form fields with or without `[]`/`[n]`) or a single value.
 */
function cardOrderLists(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const fields = input as Record<string, unknown>;
  const list = (...names: string[]) => {
    const found = names.flatMap((name) => [name, `${name}[]`]).map((key) => fields[key]).find((v) => !isBlank(v));
    const indexed = Object.keys(fields)
      .filter((key) => names.some((name) => new RegExp(`^${name}\\[\\d+\\]$`).test(key)))
      .map((key) => fields[key]);
    const value = found ?? (indexed.length ? indexed : undefined);
    return value === undefined || Array.isArray(value) || typeof value === 'object' ? value : [value];
  };
  return { service_ids: list('service_ids', 'serviceIds'), quantities: list('quantities', 'quantity') };
}

/** A12 body (C5). Quantities are bounded per line by MAX_QUANTITY_PER_LINE after equal services are merged. */
export const cardOrderBody = z.preprocess(
  cardOrderLists,
  z
    .object({ service_ids: lineList(id()), quantities: lineList(positiveInt()) })
    .refine((body) => body.service_ids.length === body.quantities.length, {
      path: ['service_ids'],
      error: 'The service ids and quantities fields must have the same number of items.',
    })
    .openapi({ description: 'Also accepted: `serviceIds` and `quantity` (the spec samples), and form fields `service_ids[]=…`.' }),
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

/** A15/A16 query (C11). */
export const orderListQuery = z.object({ page: pageQuery().optional(), per_page: pageQuery().optional() });

// ───────────────────────────── responses (spec §2 Order) ─────────────────────────────

const money = z.number();

const orderFields = {
  utr: z.string().openapi({ example: 'C0MWT6AW5N89FD612DA6B49BED' }),
  price: money,
  currency: z.string(),
  symbol: z.string(),
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

export const TopUpOrder = z
  .object({
    ...orderFields,
    order_details: z.array(z.object({ ...lineFields, name: z.string() })),
    informations: z.record(z.string(), z.string()).openapi({ description: 'Form label → the value given' }),
  })
  .openapi('TopUpOrder');

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
  .openapi('CardOrder');
