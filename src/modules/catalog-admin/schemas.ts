import { z } from '@hono/zod-openapi';
import { adminMoney, listOf, moneyAmount } from '../../http/fields.js';
import { id, keyOf, MAX_ID, optionalText, positiveInt, requiredText, text } from '../../http/validation.js';
import { isBlank, isFieldPattern } from '../../lib/text.js';
import { CardService } from '../catalog/schemas.js';

/**
 * C19 request bodies: the spec's field names, one schema per request. A PATCH body is its POST body with every
 * field optional; a field that is sent is checked as on creation (a blank `name` is "required", not ignored).
 */

const status = z.literal([0, 1], { error: 'must be 0 or 1.' }).openapi({ description: '1 = active, 0 = inactive (out of the catalog)' });
const discountType = z.enum(['percentage', 'flat'], { error: 'must be percentage or flat.' });
const count = (max = MAX_ID) =>
  z.number({ error: 'must be a whole number.' }).int({ error: 'must be a whole number.' }).min(0, { error: 'must be at least 0.' }).max(max, { error: `must not be greater than ${max}.` });
/** Text that may be cleared: blank or null stores null. */
const nullableText = (max: number) => z.preprocess((v) => (isBlank(v) ? null : v), text(max).nullable());
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A URL slug; blank or absent: made from the name on creation, left as it is on a change. */
const slug = z.preprocess(
  (v) => (isBlank(v) ? undefined : v),
  text(160)
    .refine((v) => SLUG.test(v), { error: 'must hold only lowercase letters, digits and single dashes.' })
    .optional(),
);
/** A calendar date PostgreSQL holds (it has no year 0). */
const date = requiredText(10).refine((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !v.startsWith('0000') && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), {
  error: 'must be a date in the form YYYY-MM-DD.',
});
const map = <T extends z.ZodType>(values: T) => z.record(text(100), values, { error: 'must be an object of strings.' });

// ───────────────────────────── categories ─────────────────────────────

export const CategoryBody = z.object({
  name: requiredText(120),
  icon: text(120).optional().openapi({ description: 'Icon class name' }),
  type: z.enum(['top_up', 'card'], { error: 'must be top_up or card.' }),
  status: status.optional(),
});
export const CategoryPatch = CategoryBody.partial();

// ───────────────────────────── products ─────────────────────────────

/** Names the top-up order body uses itself: an order field cannot take them. */
const ORDER_BODY_FIELDS = ['topUpId', 'serviceId', 'max_price', 'check_player'];

const OrderFieldInput = z
  .object({
    field_value: requiredText(120).openapi({ description: 'The label (also the key of the order\'s `informations`)' }),
    field_name: requiredText(60)
      .refine((v) => /^[A-Za-z][A-Za-z0-9_]*$/.test(v), { error: 'must start with a letter and hold only letters, digits and underscores.' })
      .refine((v) => !ORDER_BODY_FIELDS.includes(v), { error: `must not be ${ORDER_BODY_FIELDS.slice(0, -1).join(', ')} or ${ORDER_BODY_FIELDS.at(-1)}.` })
      .openapi({ description: 'The name of the field in the order request' }),
    field_placeholder: text(255).default(''),
    field_note: text(255).default(''),
    field_type: z.enum(['text', 'select'], { error: 'must be text or select.' }),
    option: map(requiredText(255)).optional().openapi({ description: 'select only: option value → label' }),
    pattern: text(200)
      .refine(isFieldPattern, { error: 'must be a valid regular expression.' })
      .optional()
      .openapi({ description: 'text only: a regular expression the whole value must match, e.g. `[0-9]{6,12}` (C27)', example: '[0-9]{6,12}' }),
  })
  .superRefine((field, ctx) => {
    const options = Object.keys(field.option ?? {}).length;
    if (field.field_type === 'select' && options === 0) ctx.addIssue({ code: 'custom', path: ['option'], message: 'is required for a select field.' });
    if (field.field_type === 'text' && field.option !== undefined) ctx.addIssue({ code: 'custom', path: ['option'], message: 'is only for select fields.' });
    if (field.field_type === 'select' && field.pattern !== undefined) ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'is only for text fields.' });
  });

const productFields = {
  category_id: id(),
  name: requiredText(160),
  slug,
  note: nullableText(1000).optional(),
  description: text(50_000).optional().openapi({ description: 'May contain markup' }),
  guide: text(50_000).optional().openapi({ description: 'May contain markup' }),
  status: status.optional(),
};

export const TopUpBody = z.object({
  ...productFields,
  region: requiredText(120),
  order_information: listOf('order_information', OrderFieldInput, { max: 20, distinct: 'field_name' }).openapi({
    description: 'The order form: one required field of the top-up order per entry',
  }),
});
export const TopUpPatch = TopUpBody.partial();

export const CardBody = z.object({ ...productFields, region: optionalText(120) });
export const CardPatch = CardBody.partial();

// ───────────────────────────── services ─────────────────────────────

const serviceFields = {
  name: requiredText(160),
  price: moneyAmount(false),
  discount: moneyAmount(false).optional(),
  discount_type: discountType.optional(),
  status: status.optional(),
};

export const TopUpServiceBody = z.object(serviceFields);
export const TopUpServicePatch = TopUpServiceBody.partial();

export const CardServiceBody = z.object({
  ...serviceFields,
  low_stock_threshold: count().optional().openapi({ description: 'stock.low is sent when available codes fall below it; 0: never' }),
});
export const CardServicePatch = CardServiceBody.partial();

// ───────────────────────────── gateways ─────────────────────────────

const ReceivableCurrency = z.object({
  name: requiredText(20),
  currency_symbol: requiredText(20),
  conversion_rate: requiredText(40),
  min_limit: requiredText(40),
  max_limit: requiredText(40),
  percentage_charge: requiredText(40),
  fixed_charge: requiredText(40),
});

export const GatewayBody = z.object({
  code: requiredText(60),
  name: requiredText(120),
  sort_by: count().optional(),
  image: text(1000).optional(),
  driver: requiredText(20).optional(),
  status: status.optional(),
  parameters: map(text(1000)).optional().openapi({ description: 'Public parameters only: never credentials' }),
  currencies: map(map(text(100))).optional(),
  extra_parameters: map(text(1000)).nullable().optional(),
  supported_currency: z.array(requiredText(10), { error: 'must be a list of strings.' }).max(200).optional(),
  receivable_currencies: listOf('receivable_currencies', ReceivableCurrency, { max: 200, distinct: 'name' }).optional(),
  description: text(5000).optional(),
  currency_type: count(32_767).optional(),
  is_sandbox: z.literal([0, 1], { error: 'must be 0 or 1.' }).optional(),
  environment: requiredText(20).optional(),
  is_manual: z.literal([0, 1], { error: 'must be 0 or 1.' }).nullable().optional(),
  note: nullableText(1000).optional(),
});
export const GatewayPatch = GatewayBody.partial();

// ───────────────────────────── campaigns ─────────────────────────────

const CampaignMember = z.object({
  id: id().openapi({ description: 'The service' }),
  price: moneyAmount(false),
  discount: moneyAmount(false).optional(),
  discount_type: discountType.optional(),
  max_sell: positiveInt().openapi({ description: 'Units sold at the campaign price at most' }),
});

export const CampaignBody = z.object({
  name: requiredText(160),
  start_date: date,
  end_date: date,
  status: status.optional(),
  top_up_services: listOf('top_up_services', CampaignMember, { max: 500, distinct: 'id' }).optional(),
  card_services: listOf('card_services', CampaignMember, { max: 500, distinct: 'id' }).optional(),
});
export const CampaignPatch = CampaignBody.partial();

// ───────────────────────────── prices per account (C24) ─────────────────────────────

const percentOff = moneyAmount(false)
  .refine((v) => Number(v) <= 100, { error: 'must not be greater than 100.' })
  .openapi({ description: 'Percent off the catalog price (at most 2 decimals)', example: '5' });

export const TierBody = z.object({ name: requiredText(100), percent_off: percentOff.optional() });
export const TierPatch = TierBody.partial();

const TierPrice = z.object({
  kind: z.enum(['top_up', 'card'], { error: 'must be top_up or card.' }),
  service_id: id().openapi({ description: 'The top-up or card service' }),
  price: moneyAmount(false).openapi({ description: 'The price in the store currency, before any C6 discount' }),
});
/** Checked entry by entry, so that a failure names the price (`prices.1.price`). */
export const TierPricesBody = listOf('prices', TierPrice, { max: 10_000, distinct: ['kind', 'service_id'] }).openapi({
  description: "The tier's own prices: they replace the ones it had",
});

/** Units of a currency per one store-currency unit: more than 0, at most 8 decimals. */
const rate = z
  .preprocess(
    (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : v),
    z
      .string({ error: 'must be a number with at most 8 decimals.' })
      .regex(/^\d{1,10}(\.\d{1,8})?$/, { error: 'must be a number with at most 8 decimals.' })
      .refine((v) => /[1-9]/.test(v), { error: 'must be greater than 0.' }),
  )
  .openapi({ description: 'Units of this currency per 1 unit of the store currency', example: '0.92' });

export const CurrencyBody = z.object({ rate, symbol: requiredText(8) });
export const CurrencyParam = z.object({
  code: keyOf('currency', z.string().regex(/^[A-Z]{3}$/, { error: 'must be a 3-letter currency code.' }), 'code'),
});

// ───────────────────────────── responses ─────────────────────────────

/** A card service as operators see it: the catalog's fields and its low-stock threshold (C17). */
export const StoreCardService = z
  .object({ ...CardService.shape, low_stock_threshold: z.number().int().openapi({ example: 5 }) })
  .openapi('StoreCardService');

/** A price tier (C24) with its own prices, in the store currency; amounts as decimal strings. */
export const Tier = z
  .object({
    id: z.number().int(),
    name: z.string(),
    percent_off: z.string().openapi({ example: '5.00' }),
    accounts: z.number().int().openapi({ description: 'Accounts on this tier' }),
    prices: z.array(z.object({ kind: z.enum(['top_up', 'card']), service_id: z.number().int(), price: adminMoney })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('PriceTier');

export const Currency = z
  .object({
    code: z.string().openapi({ example: 'EUR' }),
    rate: z.string().openapi({ example: '0.92000000', description: 'Units per 1 unit of the store currency' }),
    symbol: z.string().openapi({ example: '€' }),
    base: z.boolean().openapi({ description: 'The store currency (rate 1)' }),
    updated_at: z.string().nullable(),
  })
  .openapi('Currency');
