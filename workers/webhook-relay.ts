import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { dueDeliveries } from '../src/modules/webhooks/index.js';
import { webhookJobs } from '../src/queues/index.js';
import type { Services } from '../src/runtime/services.js';

/** One relay run at a time across every worker process. */
const WEBHOOK_RELAY_LOCK = 7301006;

export type WebhookRelayOptions = {
  intervalMs?: number;
  /** The least pause between two runs when nudged (an order moved in this process: its events may be waiting). */
  minGapMs?: number;
  /** A delivery handed to the queue this long ago and still pending is handed again (Redis lost the job). */
  lostAfterMs?: number;
  batchSize?: number;
  /** The most deliveries of one endpoint handed and not yet answered (WEBHOOK_ENDPOINT_IN_FLIGHT). */
  perEndpoint?: number;
};

/**
 * Moves due deliveries from the outbox to the webhook queue (C17). A plain timer in the worker processes,
 * like the reconciler, so it keeps working after Redis loses its data. The rows are marked in the same
 * transaction as the jobs are added: when Redis refuses them, the rows stay due for the next run. The jobs that move
 * orders nudge it (Periodic.nudge): the events they wrote are handed within `minGapMs` of the last run rather than
 * at the next interval.
 */
export function startWebhookRelay(services: Services, options: WebhookRelayOptions = {}): Periodic {
  const { intervalMs = 100, minGapMs = 50, lostAfterMs = 60_000, batchSize = 2000, perEndpoint = services.config.WEBHOOK_ENDPOINT_IN_FLIGHT } = options;
  const { db, queues, logger } = services;
  return runPeriodically(
    db,
    { lockKey: WEBHOOK_RELAY_LOCK, intervalMs, minGapMs, onError: (err) => logger.warn({ err }, 'webhook relay failed') },
    async (tx) => {
      const due = await dueDeliveries(tx, { limit: batchSize, lostAfterMs, perEndpoint });
      if (due.length === 0) return;
      await queues.webhooks.addBulk(webhookJobs(due));
    },
  );
}
