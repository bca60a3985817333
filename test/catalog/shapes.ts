/** The field lists of the spec's resource tables (§2), for exact key-set checks. */
import { expect } from 'vitest';
import type { Json } from '../helpers/api.js';

export const CATEGORY_KEYS = ['id', 'name', 'icon', 'type', 'active_children'];

export const TOP_UP_KEYS = [
  'id', 'category_id', 'name', 'slug', 'region', 'note', 'status', 'instant_delivery', 'image', 'preview_image',
  'order_information', 'description', 'guide', 'total_review', 'avg_rating', 'sort_by', 'deleted_at', 'created_at',
  'updated_at', 'top_up_detail_route',
];

const SERVICE_COMMON = [
  'id', 'name', 'image', 'image_driver', 'price', 'discount', 'discount_type', 'status', 'is_offered', 'offered_sell',
  'max_sell', 'sort_by', 'old_data', 'campaign_data', 'created_at', 'updated_at', 'image_path',
];
export const TOP_UP_SERVICE_KEYS = [...SERVICE_COMMON, 'top_up_id'];
export const CARD_SERVICE_KEYS = [...SERVICE_COMMON, 'card_id'];
export const EXTENDED_SERVICE_KEYS = [...TOP_UP_SERVICE_KEYS, 'currency', 'currency_symbol', 'discountedAmount', 'discountedPriceWithoutDiscount'];

const CAMPAIGN_SERVICE_COMMON = [
  'id', 'name', 'price', 'discount', 'discount_type', 'status', 'offered_sell', 'max_sell', 'old_data', 'campaign_data',
  'created_at', 'updated_at', 'image_path',
];
export const CAMPAIGN_TOP_UP_KEYS = [...CAMPAIGN_SERVICE_COMMON, 'top_up_id'];
export const CAMPAIGN_CARD_KEYS = [...CAMPAIGN_SERVICE_COMMON, 'card_id'];
export const CAMPAIGN_KEYS = ['id', 'name', 'start_date', 'end_date', 'status', 'created_at', 'updated_at', 'topups', 'cards'];

export const CARD_KEYS = ['id', 'category_id', 'name', 'slug', 'status', 'product_image', 'preview_image'];
export const CARD_DETAIL_KEYS = [
  ...CARD_KEYS, 'region', 'note', 'instant_delivery', 'description', 'guide', 'total_review', 'avg_rating', 'sell_count',
  'trending', 'sort_by', 'created_at', 'updated_at',
];

export const GATEWAY_KEYS = [
  'id', 'code', 'name', 'sort_by', 'image', 'driver', 'status', 'parameters', 'currencies', 'extra_parameters',
  'supported_currency', 'receivable_currencies', 'description', 'currency_type', 'is_sandbox', 'environment', 'is_manual',
  'note', 'created_at', 'updated_at',
];
export const RECEIVABLE_CURRENCY_KEYS = ['name', 'currency_symbol', 'conversion_rate', 'min_limit', 'max_limit', 'percentage_charge', 'fixed_charge'];

export const REVIEW_KEYS = ['id', 'rating', 'comment', 'status', 'created_at', 'updated_at', 'user'];
export const REVIEW_USER_KEYS = ['id', 'firstname', 'lastname', 'image', 'image_driver', 'imgPath', 'LastSeenActivity', 'fullname'];

export const PAGE_KEYS = [
  'current_page', 'items', 'first_page_url', 'from', 'last_page', 'last_page_url', 'links', 'next_page_url', 'path',
  'per_page', 'prev_page_url', 'to', 'total',
];
export const REVIEW_PAGINATION_KEYS = ['total', 'per_page', 'current_page', 'last_page', 'next_page_url', 'prev_page_url'];

export function expectKeys(value: Json, keys: string[]) {
  expect(Object.keys(value).sort()).toEqual([...keys].sort());
}

export const ABSOLUTE_URL = /^http:\/\/127\.0\.0\.1:\d+\//;
