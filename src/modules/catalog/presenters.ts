import type { ProductImage, ProductKind } from '../../db/schema.js';
import type { Caller } from '../../core/caller.js';
import { moneyNumber } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';
import type { AssetUrl } from '../../http/urls.js';
import { discountFigures } from '../campaigns/pricing.js';
import { accountPricing, accountSnapshot, type PriceView } from '../prices/account-price.js';
import type { CampaignRow, CardRow, CardServiceRow, CategoryRow, GatewayRow, TopUpRow, TopUpServiceRow } from './service.js';

/** The caller's currency, in which prices are shown. */
type CallerCurrency = Pick<Caller, 'currency' | 'currencySymbol'>;

/** Absolute URLs for one request: stored paths and the API's own routes. */
export type Urls = { asset: AssetUrl; base: string };

export function presentCategory(row: Pick<CategoryRow, 'id' | 'name' | 'icon' | 'type'> & { activeChildren: number }) {
  return { id: row.id, name: row.name, icon: row.icon, type: row.type, active_children: row.activeChildren };
}

export type AnyService = TopUpServiceRow | CardServiceRow;

const owner = (s: AnyService) => ('topUpId' in s ? { top_up_id: s.topUpId } : { card_id: s.cardId });

const kindOf = (s: AnyService): ProductKind => ('topUpId' in s ? 'top_up' : 'card');

/**
 * A service's pricing as the caller pays it (C24): its own fields (campaign pricing while in one), old_data (the
 * regular pricing) and campaign_data, at the caller's tier and in its currency. The catalog's as it is for an account
 * with no tier in the store currency.
 */
function pricing(s: AnyService, view: PriceView) {
  const kind = kindOf(s);
  const inCampaign = s.isOffered === 1;
  return {
    fields: accountPricing(kind, s.id, s, view, inCampaign),
    oldData: s.oldData ? accountSnapshot(kind, s.id, s.oldData, view, false) : null,
    campaignData: s.campaignData ? accountSnapshot(kind, s.id, s.campaignData, view, true) : null,
  };
}

/** Top-up service / Card service (spec §2): the service's current pricing, campaign pricing while in one. */
export function presentService(s: AnyService, urls: Urls, view: PriceView) {
  const { fields, oldData, campaignData } = pricing(s, view);
  return {
    id: s.id,
    ...owner(s),
    name: s.name,
    image: s.image,
    image_driver: s.imageDriver,
    price: moneyNumber(fields.price),
    discount: moneyNumber(fields.discount),
    discount_type: s.discountType,
    status: s.status,
    is_offered: s.isOffered,
    offered_sell: s.offeredSell,
    max_sell: s.maxSell,
    sort_by: s.sortBy,
    old_data: oldData,
    campaign_data: campaignData,
    created_at: isoMicros(s.createdAt),
    updated_at: isoMicros(s.updatedAt),
    image_path: urls.asset(s.image),
  };
}

/** The extended service of the top-up details (C6): priced in the caller's account currency. */
export function presentExtendedService(s: TopUpServiceRow, urls: Urls, account: CallerCurrency, view: PriceView) {
  return {
    ...presentService(s, urls, view),
    currency: account.currency,
    currency_symbol: account.currencySymbol,
    ...discountFigures(pricing(s, view).fields),
  };
}

/** A service as listed inside a campaign (spec §2 Campaign `topups` / `cards`). */
function presentCampaignService(s: AnyService, urls: Urls, view: PriceView) {
  const { image: _image, image_driver: _driver, is_offered: _offered, sort_by: _sort, ...listed } = presentService(s, urls, view);
  return listed;
}

const orderInformationObject = (fields: TopUpRow['orderInformation']) =>
  Object.fromEntries(fields.map((field, i) => [String(i + 1), field]));

function topUpFields(row: TopUpRow, urls: Urls) {
  return {
    id: row.id,
    category_id: row.categoryId,
    name: row.name,
    slug: row.slug,
    region: row.region,
    note: row.note,
    status: row.status,
    instant_delivery: row.instantDelivery,
    image: presentImage(row.image),
    preview_image: urls.asset(row.image.preview),
    description: row.description,
    guide: row.guide,
    total_review: row.totalReview,
    avg_rating: Number(row.avgRating),
    sort_by: row.sortBy,
    deleted_at: isoMicros(row.deletedAt),
    created_at: isoMicros(row.createdAt),
    updated_at: isoMicros(row.updatedAt),
    top_up_detail_route: `${urls.base}/api/top-up/details?slug=${encodeURIComponent(row.slug)}`,
  };
}

const presentImage = (image: ProductImage) => ({
  image: image.image,
  image_driver: image.image_driver,
  preview: image.preview,
  preview_driver: image.preview_driver,
});

/** A top-up in the list (A3): order fields keyed by 1-based position, with its active services. */
export function presentTopUpListItem(row: TopUpRow & { services: TopUpServiceRow[] }, urls: Urls, view: PriceView) {
  return {
    ...topUpFields(row, urls),
    order_information: orderInformationObject(row.orderInformation),
    services: row.services.map((s) => presentService(s, urls, view)),
  };
}

/** The top-up of the details endpoint (A4): order fields as an array, extended active services. */
export function presentTopUpDetails(row: TopUpRow, services: TopUpServiceRow[], urls: Urls, account: CallerCurrency, view: PriceView) {
  return {
    ...topUpFields(row, urls),
    order_information: row.orderInformation,
    active_services: services.map((s) => presentExtendedService(s, urls, account, view)),
  };
}

export function presentCard(row: CardRow, urls: Urls) {
  return {
    id: row.id,
    category_id: row.categoryId,
    name: row.name,
    slug: row.slug,
    status: row.status,
    product_image: urls.asset(row.image.image),
    preview_image: urls.asset(row.image.preview),
  };
}

/** The card of the details endpoint (A10): the list fields plus the described further fields. */
export function presentCardDetails(row: CardRow, urls: Urls) {
  return {
    ...presentCard(row, urls),
    region: row.region,
    note: row.note,
    instant_delivery: row.instantDelivery,
    description: row.description,
    guide: row.guide,
    total_review: row.totalReview,
    avg_rating: Number(row.avgRating),
    sell_count: row.sellCount,
    trending: row.trending,
    sort_by: row.sortBy,
    created_at: isoMicros(row.createdAt),
    updated_at: isoMicros(row.updatedAt),
  };
}

/** Payment gateway (spec §2): the table holds only public parameters, never credentials. */
export function presentGateway(g: GatewayRow, urls: Urls) {
  return {
    id: g.id,
    code: g.code,
    name: g.name,
    sort_by: g.sortBy,
    image: urls.asset(g.image),
    driver: g.driver,
    status: g.status,
    parameters: g.parameters,
    currencies: g.currencies,
    extra_parameters: g.extraParameters ?? null,
    supported_currency: g.supportedCurrency,
    receivable_currencies: g.receivableCurrencies,
    description: g.description,
    currency_type: g.currencyType,
    is_sandbox: g.isSandbox,
    environment: g.environment,
    is_manual: g.isManual,
    note: g.note,
    created_at: isoMicros(g.createdAt),
    updated_at: isoMicros(g.updatedAt),
  };
}

export function presentCampaign(
  active: { campaign: CampaignRow; topUpServices: TopUpServiceRow[]; cardServices: CardServiceRow[] },
  urls: Urls,
  view: PriceView,
) {
  const { campaign } = active;
  return {
    id: campaign.id,
    name: campaign.name,
    start_date: campaign.startDate,
    end_date: campaign.endDate,
    status: campaign.status,
    created_at: isoMicros(campaign.createdAt),
    updated_at: isoMicros(campaign.updatedAt),
    topups: active.topUpServices.map((s) => presentCampaignService(s, urls, view)),
    cards: active.cardServices.map((s) => presentCampaignService(s, urls, view)),
  };
}
