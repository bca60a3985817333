import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { noPrunedRows, PRUNED_TABLES, pruneBatch, type EventCursor } from '../src/modules/retention/index.js';
import type { Services } from '../src/runtime/services.js';

/** One run at a time across every worker process. */
const RETENTION_LOCK = 7301009;

export type RetentionOptions = {
  intervalMs?: number;
  /** Rows of each kind per statement. */
  batchSize?: number;
  /** Statements of each kind per run: a backlog is worked through over several runs. */
  batchesPerRun?: number;
};

/**
 * Every `intervalMs`: deletes what is past its retention window (C23) in batches of `batchSize`, each batch its
 * own short statements, until a batch comes back short, `batchesPerRun` ran, or the workers are stopping. The lock's transaction only
 * serializes the runs; the deletes commit one batch at a time, outside it.
 */
export function startRetention(services: Services, options: RetentionOptions = {}): Periodic {
  const { intervalMs = 10 * 60_000, batchSize = 1000, batchesPerRun = 100 } = options;
  const { db, config, logger, metrics } = services;
  const windows = { tokenDays: config.TOKEN_RETENTION_DAYS, webhookDays: config.WEBHOOK_RETENTION_DAYS };
  return runPeriodically(
    db,
    { lockKey: RETENTION_LOCK, intervalMs, onError: (err) => logger.warn({ err }, 'retention run failed') },
    async (_tx, stopping) => {
      const deleted = noPrunedRows();
      let cursor: EventCursor = null;
      for (let run = 0; run < batchesPerRun && !stopping(); run++) {
        const batch = await pruneBatch(db, windows, batchSize, cursor);
        cursor = batch.events.cursor;
        for (const table of PRUNED_TABLES) {
          deleted[table] += batch.pruned[table];
          if (batch.pruned[table] > 0) metrics.retentionDeleted(table, batch.pruned[table]);
        }
        // Tokens and keys past their window are all deleted, so a short batch means none is left; old events are
        // walked in order, so a batch that looked at fewer than `batchSize` reached the cutoff.
        if (batch.pruned.auth_tokens < batchSize && batch.pruned.idempotency_keys < batchSize && batch.events.looked < batchSize) break;
      }
      if (Object.values(deleted).some((n) => n > 0)) logger.info({ deleted }, 'retention deleted expired rows');
    },
  );
}
