import { z } from '@hono/zod-openapi';
import { id, pageQuery, requiredText } from '../../http/validation.js';

/** A3 GET top-up/list */
export const topUpListQuery = z.object({
  category_id: id().optional(),
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
});

/** A4 GET top-up/details */
export const topUpDetailsQuery = z.object({ slug: requiredText(160) });

/** A5 GET topup/services */
export const topUpServicesQuery = z.object({ top_up_id: id().optional() });

/** A9 GET get-card */
export const cardListQuery = z.object({ category_id: id().optional() });

/** A10 GET card/details */
export const cardDetailsQuery = z.object({ card_id: id() });

/** A11 GET card/services */
export const cardServicesQuery = z.object({ card_id: id().optional() });

// ───────────────────────────── responses (spec §2) ─────────────────────────────

const timestamp = z.string().openapi({ example: '2026-11-23T07:40:12.123456Z' });
const money = z.number().openapi({ example: 9.99 });
const pricing = z.object({
  price: z.string(),
  discount: z.string(),
  discount_type: z.enum(['percentage', 'flat']),
  max_sell: z.string().optional(),
});

export const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    icon: z.string(),
    type: z.enum(['top_up', 'card']),
    active_children: z.number().int(),
  })
  .openapi('Category');

const serviceFields = {
  id: z.number().int(),
  name: z.string(),
  image: z.string(),
  image_driver: z.string(),
  price: money,
  discount: money,
  discount_type: z.enum(['percentage', 'flat']),
  status: z.number().int(),
  is_offered: z.number().int(),
  offered_sell: z.number().int(),
  max_sell: z.number().int(),
  sort_by: z.number().int(),
  old_data: pricing.nullable(),
  campaign_data: pricing.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  image_path: z.string(),
};

export const TopUpService = z.object({ ...serviceFields, top_up_id: z.number().int() }).openapi('TopUpService');
export const CardService = z.object({ ...serviceFields, card_id: z.number().int() }).openapi('CardService');

/** The top-up details' service (C6): in the caller's currency, with the discount worked out. */
export const ExtendedTopUpService = TopUpService.extend({
  currency: z.string(),
  currency_symbol: z.string(),
  discountedAmount: money,
  discountedPriceWithoutDiscount: money,
}).openapi('ExtendedTopUpService');

const OrderField = z.object({
  field_value: z.string(),
  field_name: z.string(),
  field_placeholder: z.string(),
  field_note: z.string(),
  field_type: z.enum(['text', 'select']),
  option: z.record(z.string(), z.string()).optional(),
});

const topUpFields = {
  id: z.number().int(),
  category_id: z.number().int(),
  name: z.string(),
  slug: z.string(),
  region: z.string(),
  note: z.string().nullable(),
  status: z.number().int(),
  instant_delivery: z.number().int(),
  image: z.object({ image: z.string(), image_driver: z.string(), preview: z.string(), preview_driver: z.string() }),
  preview_image: z.string(),
  description: z.string(),
  guide: z.string(),
  total_review: z.number().int(),
  avg_rating: z.number(),
  sort_by: z.number().int(),
  deleted_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  top_up_detail_route: z.string(),
};

/** A3: order fields keyed by 1-based position. */
export const TopUpListItem = z
  .object({ ...topUpFields, order_information: z.record(z.string(), OrderField), services: z.array(TopUpService) })
  .openapi('TopUpListItem');

/** A4: order fields as an array, extended active services. */
export const TopUpDetails = z
  .object({ ...topUpFields, order_information: z.array(OrderField), active_services: z.array(ExtendedTopUpService) })
  .openapi('TopUpDetails');

export const Card = z
  .object({
    id: z.number().int(),
    category_id: z.number().int(),
    name: z.string(),
    slug: z.string(),
    status: z.number().int(),
    product_image: z.string(),
    preview_image: z.string(),
  })
  .openapi('Card');

export const CardDetails = Card.extend({
  region: z.string(),
  note: z.string().nullable(),
  instant_delivery: z.number().int(),
  description: z.string(),
  guide: z.string(),
  total_review: z.number().int(),
  avg_rating: z.number(),
  sell_count: z.number().int(),
  trending: z.number().int(),
  sort_by: z.number().int(),
  created_at: timestamp,
  updated_at: timestamp,
}).openapi('CardDetails');

export const Gateway = z
  .object({
    id: z.number().int(),
    code: z.string(),
    name: z.string(),
    sort_by: z.number().int(),
    image: z.string(),
    driver: z.string(),
    status: z.number().int(),
    parameters: z.record(z.string(), z.string()),
    currencies: z.record(z.string(), z.record(z.string(), z.string())),
    extra_parameters: z.record(z.string(), z.string()).nullable(),
    supported_currency: z.array(z.string()),
    receivable_currencies: z.array(z.record(z.string(), z.string())),
    description: z.string(),
    currency_type: z.number().int(),
    is_sandbox: z.number().int(),
    environment: z.string(),
    is_manual: z.number().int().nullable(),
    note: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Gateway');

/** A service as listed in a campaign: no image, is_offered or sort_by. */
const campaignService = <T extends z.ZodObject>(service: T) => service.omit({ image: true, image_driver: true, is_offered: true, sort_by: true });

export const Campaign = z
  .object({
    id: z.number().int(),
    name: z.string(),
    start_date: z.string().openapi({ example: '2026-11-20' }),
    end_date: z.string().openapi({ example: '2026-11-30' }),
    status: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
    topups: z.array(campaignService(TopUpService)),
    cards: z.array(campaignService(CardService)),
  })
  .openapi('Campaign');
