/**
 * Queue names and job payload schemas, shared by the API (producers) and workers/ (consumers).
 * Payloads carry ids only: never secrets, tokens or card codes.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';
import type { Config } from '../core/env.js';
import { withTimeout } from '../lib/deadline.js';
import { hasHashTag } from '../lib/redis.js';

export const QUEUE_NAMES = {
  fulfilment: 'order-fulfilment',
  restock: 'card-restock',
  webhooks: 'webhook-delivery',
  routing: 'top-up-routing',
} as const;

/**
 * Moves one order on (jobId = the order's utr, so a repeated enqueue is a no-op). `requestId`: the request that
 * placed it, so its log lines can be found by that id (the reconciler re-enqueues without one).
 */
export const FulfilmentJob = z.object({ orderId: z.number().int().positive(), utr: z.string().min(1), requestId: z.string().optional() });
export type FulfilmentJob = z.infer<typeof FulfilmentJob>;

/**
 * Moves a top-up order one step on, later (C22): a status query of an unknown outcome, the next route after a
 * refusal that came by callback or from an operator, a wait for an open circuit. jobId = `advance-<utr>-<step>`; the
 * job goes on only while `step` is the order's current routing step, so an order has one chain of them at a time.
 */
export const RoutingJob = z.object({ orderId: z.number().int().positive(), utr: z.string().min(1), step: z.number().int().positive() });
export type RoutingJob = z.infer<typeof RoutingJob>;

export const routingJobId = (utr: string, step: number) => `advance-${utr}-${step}`;

/** Fulfils the `stock_short` orders waiting for codes of one card service. */
export const RestockJob = z.object({ cardServiceId: z.number().int().positive() });
export type RestockJob = z.infer<typeof RestockJob>;

/** The most deliveries one webhook job carries. */
export const WEBHOOK_JOB_DELIVERIES = 50;

/**
 * One attempt of each of a few webhook deliveries (jobId = `webhooks-<first delivery id>-<hand-off ms>`: one job per
 * hand-off).
 */
export const WebhookJob = z.object({ deliveryIds: z.array(z.number().int().positive()).min(1).max(WEBHOOK_JOB_DELIVERIES) });
export type WebhookJob = z.infer<typeof WebhookJob>;

/**
 * The jobs of deliveries handed to the queue at `handOff` (ms): an endpoint's deliveries together, so that a slow
 * receiver holds few jobs, in jobs of at most WEBHOOK_JOB_DELIVERIES.
 */
export function webhookJobs(due: ReadonlyArray<{ id: number; endpointId: number | null; handOff: number }>) {
  const byEndpoint = [...due].sort((a, b) => (a.endpointId ?? 0) - (b.endpointId ?? 0) || a.id - b.id);
  const jobs = [];
  for (let i = 0; i < byEndpoint.length; i += WEBHOOK_JOB_DELIVERIES) {
    const chunk = byEndpoint.slice(i, i + WEBHOOK_JOB_DELIVERIES);
    jobs.push({ name: 'deliver', data: { deliveryIds: chunk.map((d) => d.id) }, opts: { jobId: `webhooks-${chunk[0]!.id}-${chunk[0]!.handOff}` } });
  }
  return jobs;
}

/**
 * How the queues sit in Redis. `ownSlots` (a Redis Cluster whose BULLMQ_PREFIX carries no {hash tag}): each queue's
 * name is its own hash tag (`{order-fulfilment}`), so each queue's keys share a slot while the cluster spreads the
 * queues over its masters. `fulfilmentShards` (QUEUE_SHARDS): the fulfilment queue split in that many queues by order
 * id, so its traffic too can spread; shard 0 keeps the queue's own name.
 */
export type QueueLayout = { ownSlots: boolean; fulfilmentShards: number };

export const SINGLE_SLOT: QueueLayout = { ownSlots: false, fulfilmentShards: 1 };

export const queueLayout = (config: Pick<Config, 'redis' | 'BULLMQ_PREFIX' | 'QUEUE_SHARDS'>): QueueLayout => ({
  ownSlots: config.redis.kind === 'cluster' && !hasHashTag(config.BULLMQ_PREFIX),
  fulfilmentShards: config.QUEUE_SHARDS,
});

/** A queue's name in Redis: a shard's suffix, and its own hash tag when each queue has a slot of its own. */
export function queueNameIn(layout: QueueLayout, name: string, shard = 0): string {
  const named = shard === 0 ? name : `${name}-${shard}`;
  return layout.ownSlots ? `{${named}}` : named;
}

/** The name metrics, logs and the dashboard show: without the hash tag's braces. */
export const shownName = (queue: { name: string }) => queue.name.replace(/^\{(.*)\}$/, '$1');

export type Queues = {
  /** The fulfilment queue of shard 0; fulfilmentFor picks an order's. */
  fulfilment: Queue<FulfilmentJob>;
  fulfilmentShards: Queue<FulfilmentJob>[];
  /** The fulfilment queue (shard) of an order: by its id, so every job of an order goes to the same one. */
  fulfilmentFor: (orderId: number) => Queue<FulfilmentJob>;
  restock: Queue<RestockJob>;
  webhooks: Queue<WebhookJob>;
  routing: Queue<RoutingJob>;
  /** Adds a fulfilment job (data, jobId) to its order's shard, batched: see batchedAdder. */
  addFulfilment: (job: FulfilmentJob, jobId: string) => Promise<void>;
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

export function createQueues(connection: ConnectionOptions, prefix: string, layout: QueueLayout = SINGLE_SLOT): Queues {
  const open = <T>(name: string, shard = 0) => new Queue<T>(queueNameIn(layout, name, shard), { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
  const fulfilmentShards = Array.from({ length: layout.fulfilmentShards }, (_, shard) => open<FulfilmentJob>(QUEUE_NAMES.fulfilment, shard));
  const shardOf = (orderId: number) => orderId % layout.fulfilmentShards;
  const fulfilmentFor = (orderId: number) => fulfilmentShards[shardOf(orderId)]!;
  const restock = open<RestockJob>(QUEUE_NAMES.restock);
  const webhooks = open<WebhookJob>(QUEUE_NAMES.webhooks);
  const routing = open<RoutingJob>(QUEUE_NAMES.routing);
  const all = [...fulfilmentShards, restock, webhooks, routing] as Queue[];
  const adders = fulfilmentShards.map((queue) => batchedAdder(queue, 'fulfil'));
  const addFulfilment = (job: FulfilmentJob, jobId: string) => adders[shardOf(job.orderId)]!(job, jobId);
  return {
    fulfilment: fulfilmentShards[0]!,
    fulfilmentShards,
    fulfilmentFor,
    restock,
    webhooks,
    routing,
    addFulfilment,
    all,
    close: async () => void (await Promise.all(all.map((q) => q.close()))),
  };
}

/**
 * Gathers the jobs added within `windowMs` (or `max` of them) and adds them with one addBulk: one Redis round
 * trip for many orders under load, a couple of milliseconds' wait when idle. Each caller learns whether its
 * batch went in; a batch Redis refused fails all its callers, whose orders the reconciler enqueues later.
 */
function batchedAdder(queue: Queue<FulfilmentJob>, name: string, { windowMs = 2, max = 500 } = {}) {
  type Waiting = { data: FulfilmentJob; jobId: string; settle: (err?: unknown) => void };
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = waiting;
    waiting = [];
    queue.addBulk(batch.map(({ data, jobId }) => ({ name, data, opts: { jobId } }))).then(
      () => batch.forEach((w) => w.settle()),
      (err: unknown) => batch.forEach((w) => w.settle(err ?? new Error('addBulk failed'))),
    );
  };
  return (data: FulfilmentJob, jobId: string) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ data, jobId, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      if (waiting.length >= max) flush();
      else timer ??= setTimeout(flush, windowMs);
    });
}

/**
 * Hands a placed order to the fulfilment queue (jobId = utr, so a repeat is a no-op), batched with the orders
 * placed at the same moment. A Redis that hangs must not hold the client's answer back: after `timeoutMs` the
 * order is left to the reconciler.
 */
export const enqueueFulfilment =
  (queues: Pick<Queues, 'addFulfilment'>, timeoutMs = 2000) =>
  ({ orderId, utr, requestId }: FulfilmentJob) =>
    withTimeout(timeoutMs, queues.addFulfilment({ orderId, utr, ...(requestId === undefined ? {} : { requestId }) }, utr));

/** Schedules routing step `step` of a top-up order (C22) `delayMs` from now; a step already scheduled is not doubled. */
export const scheduleRoutingStep =
  (queues: Pick<Queues, 'routing'>) =>
  async (order: { id: number; utr: string }, step: number, delayMs: number): Promise<void> => {
    await queues.routing.add('advance', { orderId: order.id, utr: order.utr, step }, { jobId: routingJobId(order.utr, step), delay: delayMs });
  };
