/**
 * Queue names and job payload schemas, shared by the API (producers) and workers/ (consumers).
 * Payloads carry ids only: never secrets, tokens or card codes.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';
import { withTimeout } from '../lib/deadline.js';

export const QUEUE_NAMES = {
  fulfilment: 'order-fulfilment',
  restock: 'card-restock',
  campaignSync: 'campaign-sync',
} as const;

/** Moves one order on (jobId = the order's utr, so a repeated enqueue is a no-op). */
export const FulfilmentJob = z.object({ orderId: z.number().int().positive(), utr: z.string().min(1) });
export type FulfilmentJob = z.infer<typeof FulfilmentJob>;

/** Fulfils the `stock_short` orders waiting for codes of one card service. */
export const RestockJob = z.object({ cardServiceId: z.number().int().positive() });
export type RestockJob = z.infer<typeof RestockJob>;

/** Brings services in line with the running campaigns (start, end, cap). */
export const CampaignSyncJob = z.object({});
export type CampaignSyncJob = z.infer<typeof CampaignSyncJob>;

export type Queues = {
  fulfilment: Queue<FulfilmentJob>;
  restock: Queue<RestockJob>;
  campaignSync: Queue<CampaignSyncJob>;
  all: Queue[];
  close: () => Promise<void>;
};

export const DEFAULT_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  // Failed jobs stay inspectable in the dashboard for a week.
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

export function createQueues(connection: ConnectionOptions, prefix: string): Queues {
  const open = <T>(name: string) => new Queue<T>(name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
  const fulfilment = open<FulfilmentJob>(QUEUE_NAMES.fulfilment);
  const restock = open<RestockJob>(QUEUE_NAMES.restock);
  const campaignSync = open<CampaignSyncJob>(QUEUE_NAMES.campaignSync);
  const all = [fulfilment, restock, campaignSync] as Queue[];
  return { fulfilment, restock, campaignSync, all, close: async () => void (await Promise.all(all.map((q) => q.close()))) };
}

/**
 * Hands a placed order to the fulfilment queue (jobId = utr, so a repeat is a no-op). A Redis that hangs
 * must not hold the client's answer back: after `timeoutMs` the order is left to the reconciler.
 */
export const enqueueFulfilment =
  (queues: Pick<Queues, 'fulfilment'>, timeoutMs = 2000) =>
  ({ orderId, utr }: FulfilmentJob) =>
    withTimeout(timeoutMs, queues.fulfilment.add('fulfil', { orderId, utr }, { jobId: utr }));
