import { presentCampaign, presentService, presentTopUpListItem, type AnyService, type Urls } from '../catalog/presenters.js';
import type { CardServiceRow } from '../catalog/service.js';
import { CATALOG_PRICES } from '../prices/account-price.js';
import type { CurrencyRow, TierPrice, TierRow } from '../prices/service.js';
import { moneyText } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';

/** Operators see the catalog's own prices: no tier, the store currency (C24). */
export const presentStoreService = (row: AnyService, urls: Urls) => presentService(row, urls, CATALOG_PRICES);
export const presentStoreCampaign = (active: Parameters<typeof presentCampaign>[0], urls: Urls) => presentCampaign(active, urls, CATALOG_PRICES);
export const presentStoreTopUp = (row: Parameters<typeof presentTopUpListItem>[0], urls: Urls) => presentTopUpListItem(row, urls, CATALOG_PRICES);

/**
 * Store resources render as the catalog shows them (catalog/presenters.ts), inactive ones too; a card service
 * adds what only operators see.
 */
export const presentCardService = (row: CardServiceRow, urls: Urls) => ({ ...presentStoreService(row, urls), low_stock_threshold: row.lowStockThreshold });

/** A price tier as operators see it (C24): amounts as decimal strings. */
export const presentTier = (tier: TierRow & { accounts: number; prices: TierPrice[] }) => ({
  id: tier.id,
  name: tier.name,
  percent_off: moneyText(tier.percentOff),
  accounts: tier.accounts,
  prices: tier.prices.map((p) => ({ kind: p.kind, service_id: p.serviceId, price: moneyText(p.price) })),
  created_at: isoMicros(tier.createdAt),
  updated_at: isoMicros(tier.updatedAt),
});

export const presentCurrency = (row: CurrencyRow) => ({
  code: row.code,
  rate: row.rate,
  symbol: row.symbol,
  base: row.base,
  updated_at: row.updatedAt === null ? null : isoMicros(row.updatedAt),
});
