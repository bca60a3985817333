export { noPrunedRows, PRUNED_TABLES, pruneBatch, type PrunedRows, type PrunedTable, type RetentionWindows } from './service.js';
