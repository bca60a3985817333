/**
 * Queue names and job payload schemas, shared by the API (producers) and workers/ (consumers).
 * Payloads carry ids only: never secrets, tokens or card codes.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';

export const QUEUE_NAMES = {
  fulfilment: 'order-fulfilment',
} as const;

export const FulfilmentJob = z.object({ orderId: z.number().int().positive(), utr: z.string().min(1) });
export type FulfilmentJob = z.infer<typeof FulfilmentJob>;

export type Queues = {
  fulfilment: Queue<FulfilmentJob>;
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
  const fulfilment = new Queue<FulfilmentJob>(QUEUE_NAMES.fulfilment, {
    connection,
    prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  const all = [fulfilment] as Queue[];
  return { fulfilment, all, close: async () => void (await Promise.all(all.map((q) => q.close()))) };
}
