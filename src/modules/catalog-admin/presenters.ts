import { presentService, type Urls } from '../catalog/presenters.js';
import type { CardServiceRow } from '../catalog/service.js';

/**
 * Store resources render as the catalog shows them (catalog/presenters.ts), inactive ones too; a card service
 * adds what only operators see.
 */
export const presentCardService = (row: CardServiceRow, urls: Urls) => ({ ...presentService(row, urls), low_stock_threshold: row.lowStockThreshold });
