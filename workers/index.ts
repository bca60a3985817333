import type { Services } from '../src/runtime/services.js';
import { until } from '../src/lib/deadline.js';
import { advanceOrder, batchedFulfilment, fulfilmentJobs, restockCardService, type FulfilmentPace, type SupplierRouting } from '../src/modules/fulfilment/index.js';
import { statusObserver } from '../src/modules/order-state/index.js';
import { syncEnvironmentProvider } from '../src/modules/providers/index.js';
import { createCircuits } from '../src/modules/suppliers/index.js';
import { FulfilmentJob, RestockJob, RoutingJob, scheduleRoutingStep, WebhookJob } from '../src/queues/index.js';
import { attemptRecorder, createWebhookSender, deliverBatch } from '../src/modules/webhooks/index.js';
import { startCampaignSync } from './campaign-sync.js';
import { startBalanceWatch } from './balance-watch.js';
import { startStockKeeping } from './stock-keeping.js';
import { startReconciler, type ReconcilerOptions } from './reconciler.js';
import { startRetention, type RetentionOptions } from './retention.js';
import { startWebhookRelay, type WebhookRelayOptions } from './webhook-relay.js';
import { startQueueWorker } from './worker.js';

/** `close(deadline)`: stop taking jobs, let the running ones finish until `deadline` (epoch ms), then let go. */
export type RunningWorkers = { close: (deadline?: number) => Promise<void> };

export type WorkerOptions = {
  reconciler?: ReconcilerOptions;
  webhookRelay?: WebhookRelayOptions;
  /** Overrides the webhook retry schedule (tests). */
  webhookRetryDelaysMs?: readonly number[];
  /** The delay of a top-up's first status query after an unknown outcome (C22); PROVIDER_STATUS_QUERY_MS when not given. */
  settleBaseMs?: number;
  /** Pause between two reads of the providers' balances. */
  balanceIntervalMs?: number;
  retention?: RetentionOptions;
  /** The pace card fulfilment reads its batch options from (the worker process `npm start` forks: placement first). */
  pace?: FulfilmentPace;
};

/** Starts every BullMQ worker and scheduler of this service in the current process. */
export async function startWorkers(services: Services, options: WorkerOptions = {}): Promise<RunningWorkers> {
  const { config, queues } = services;
  // The TOPUP_PROVIDER=http provider is a provider row like any other, written before any job is taken.
  await syncEnvironmentProvider(services.db, config);
  const suppliers: SupplierRouting = {
    codeKey: config.codeEncryptionKey,
    circuits: createCircuits({
      db: services.db,
      logger: services.logger,
      metrics: services.metrics,
      settings: { failures: config.PROVIDER_CIRCUIT_FAILURES, openSeconds: config.PROVIDER_CIRCUIT_OPEN_SECONDS },
    }),
    scheduleStep: scheduleRoutingStep(services.queues),
    settleHours: config.PROVIDER_SETTLE_HOURS,
    settleBaseMs: options.settleBaseMs ?? config.PROVIDER_STATUS_QUERY_MS,
  };
  const fulfilment = { db: services.db, metrics: services.metrics, orderPages: services.orderPages, suppliers };
  const sender = createWebhookSender();
  const delivery = {
    logger: services.logger,
    config: services.config,
    metrics: services.metrics,
    sender,
    record: attemptRecorder(services.db),
    retryDelaysMs: options.webhookRetryDelaysMs,
  };
  // Card orders of jobs that arrive while a batch transaction runs go together in the next one; top-ups go one job
  // at a time, at most WORKER_CONCURRENCY at once (as many as before batching).
  const fulfil = batchedFulfilment({ ...fulfilment, logger: services.logger }, { batch: options.pace?.batch, topUpsAtOnce: config.WORKER_CONCURRENCY });
  const relay = startWebhookRelay(services, options.webhookRelay);
  /** A job that may have moved orders: the events it wrote go to the relay now rather than at its next interval. */
  const movingOrders = <Args extends unknown[], Result>(run: (...args: Args) => Promise<Result>) => (...args: Args) => run(...args).finally(relay.nudge);
  const workers = [
    // Each job logs through its own logger: its lines carry the job and the request that placed the order.
    // Every shard's jobs go through the same batching: orders of several shards can share a transaction.
    ...queues.fulfilmentShards.map((queue) =>
      startQueueWorker(services, queue, FulfilmentJob, movingOrders((job, { logger }) => fulfil(logger, job.orderId)), Math.max(fulfilmentJobs(options.pace !== undefined), config.WORKER_CONCURRENCY)),
    ),
    startQueueWorker(
      services,
      queues.restock,
      RestockJob,
      movingOrders((job, { logger }) => restockCardService(services.db, job.cardServiceId, statusObserver({ logger, metrics: services.metrics, orderPages: services.orderPages }))),
    ),
    startQueueWorker(services, queues.routing, RoutingJob, movingOrders((job, { logger }) => advanceOrder({ ...fulfilment, logger }, job.orderId, job.step))),
    // Deliveries wait on the network, not on the database: many jobs at once (each sends up to 50), so the few a slow
    // receiver holds (WEBHOOK_ENDPOINT_IN_FLIGHT deliveries at most) leave the rest free.
    startQueueWorker(services, queues.webhooks, WebhookJob, (job) => deliverBatch(services.db, delivery, job.deliveryIds), 128),
  ];
  // Timers, not Redis-stored schedules: they keep running after Redis loses its data. Campaign sync is
  // one such timer (every 2 s, one process at a time on an advisory lock); store changes also run it in
  // their own transaction, so a campaign change takes effect at once.
  const timers = [
    startReconciler(services, options.reconciler),
    startCampaignSync(services),
    relay,
    startStockKeeping(services),
    startBalanceWatch(services, options.balanceIntervalMs),
    startRetention(services, options.retention),
  ];
  return {
    close: async (deadline = Date.now() + 10_000) => {
      await Promise.all([...timers, ...workers].map((w) => until(deadline, w.close())));
      await Promise.all(workers.map((w) => w.release()));
      await until(deadline, sender.close());
    },
  };
}
