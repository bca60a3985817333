import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { foldCardSales } from '../src/modules/fulfilment/index.js';
import { noteStockLevels } from '../src/modules/inventory/index.js';
import type { Services } from '../src/runtime/services.js';

/** One run at a time across every worker process. */
const STOCK_KEEPING_LOCK = 7301007;

/**
 * Every `intervalMs`: adds the sales that fulfilment appended to each card's `sell_count`, and checks every card
 * service against its low-stock threshold (a crossing that concurrent fulfilments missed alerts here).
 */
export function startStockKeeping(services: Services, intervalMs = 1000): Periodic {
  return runPeriodically(
    services.db,
    { lockKey: STOCK_KEEPING_LOCK, intervalMs, onError: (err) => services.logger.warn({ err }, 'stock keeping failed') },
    async (tx) => {
      await foldCardSales(tx);
      await noteStockLevels(tx);
    },
  );
}
