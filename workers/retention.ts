import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { noPrunedRows, PRUNED_TABLES, pruneBatch } from '../src/modules/retention/index.js';
import type { Services } from '../src/services.js';

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
 * own short statements, until a batch comes back short or `batchesPerRun` ran. The lock's transaction only
 * serializes the runs; the deletes commit one batch at a time, outside it.
 */
export function startRetention(services: Services, options: RetentionOptions = {}): Periodic {
  const { intervalMs = 10 * 60_000, batchSize = 1000, batchesPerRun = 100 } = options;
  const { db, config, logger, metrics } = services;
  const windows = { tokenDays: config.TOKEN_RETENTION_DAYS, webhookDays: config.WEBHOOK_RETENTION_DAYS };
  return runPeriodically(
    db,
    { lockKey: RETENTION_LOCK, intervalMs, onError: (err) => logger.warn({ err }, 'retention run failed') },
    async () => {
      const deleted = noPrunedRows();
      for (let run = 0; run < batchesPerRun; run++) {
        const pruned = await pruneBatch(db, windows, batchSize);
        for (const table of PRUNED_TABLES) {
          deleted[table] += pruned[table];
          if (pruned[table] > 0) metrics.retentionDeleted(table, pruned[table]);
        }
        // Events and tokens decide whether there is more: deliveries and attempts go with their events.
        if (pruned.auth_tokens < batchSize && pruned.idempotency_keys < batchSize && pruned.webhook_events < batchSize) break;
      }
      if (Object.values(deleted).some((n) => n > 0)) logger.info({ deleted }, 'retention deleted expired rows');
    },
  );
}
