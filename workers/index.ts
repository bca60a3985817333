import type { Services } from '../src/services.js';
import { until } from '../src/lib/deadline.js';
import { syncCampaigns } from '../src/modules/campaigns/index.js';
import { fulfilOrder, restockCardService, topUpProvider } from '../src/modules/fulfilment/index.js';
import { CampaignSyncJob, FulfilmentJob, QUEUE_NAMES, RestockJob } from '../src/queues/index.js';
import { startCampaignSync } from './campaign-sync.js';
import { startReconciler, type ReconcilerOptions } from './reconciler.js';
import { startQueueWorker } from './worker.js';

/** `close(deadline)`: stop taking jobs, let the running ones finish until `deadline` (epoch ms), then let go. */
export type RunningWorkers = { close: (deadline?: number) => Promise<void> };

export type WorkerOptions = { reconciler?: ReconcilerOptions };

/** Starts every BullMQ worker and scheduler of this service in the current process. */
export async function startWorkers(services: Services, options: WorkerOptions = {}): Promise<RunningWorkers> {
  const fulfilment = { db: services.db, logger: services.logger, provider: topUpProvider(services.config) };
  const workers = [
    startQueueWorker(services, QUEUE_NAMES.fulfilment, FulfilmentJob, (job) => fulfilOrder(fulfilment, job.orderId)),
    startQueueWorker(services, QUEUE_NAMES.restock, RestockJob, (job) => restockCardService(services.db, job.cardServiceId)),
    // Syncs serialise on an advisory lock: one at a time per process is enough.
    startQueueWorker(services, QUEUE_NAMES.campaignSync, CampaignSyncJob, () => syncCampaigns(services.db), 1),
  ];
  // Timers, not Redis-stored schedules: they keep running after Redis loses its data.
  const timers = [startReconciler(services, options.reconciler), startCampaignSync(services)];
  return {
    close: async (deadline = Date.now() + 10_000) => {
      await Promise.all([...timers, ...workers].map((w) => until(deadline, w.close())));
      await Promise.all(workers.map((w) => w.release()));
    },
  };
}
