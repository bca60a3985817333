/** What the worker processes use of the inventory module. */
export { noteStockLevels } from './low-stock.js';
