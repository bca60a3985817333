import type { StoreGauges } from '../runtime/services.js';
import { availableCodesPerService, lowStockPerService } from '../modules/inventory/stock-levels.js';
import { initiateBacklog } from '../modules/order-state/waiting.js';
import { providerStates } from '../modules/providers/service.js';

/** What /metrics reads from the store's tables at each scrape: stock, suppliers and orders waiting in `initiate`. */
export const storeGauges: StoreGauges = (db) => ({
  codesAvailable: () => availableCodesPerService(db),
  lowStock: () => lowStockPerService(db),
  providers: () => providerStates(db),
  initiate: () => initiateBacklog(db),
});
