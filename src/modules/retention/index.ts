export { noPrunedRows, PRUNED_TABLES, pruneBatch, type EventCursor, type PrunedRows, type PrunedTable, type RetentionWindows } from './service.js';
