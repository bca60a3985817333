import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { z } from 'zod';
import type { Services } from '../src/services.js';
import { connectionErrors } from '../src/lib/logger.js';

/**
 * `close()` stops taking jobs and waits for the running ones; `release()` then drops the connection at
 * once, so a stop never waits on an unreachable Redis (a job cut short is retried: handlers are idempotent).
 */
export type RunningWorker = { close: () => Promise<void>; release: () => Promise<void> };

/**
 * A typed BullMQ worker on a Redis connection of its own (maxRetriesPerRequest: null, as BullMQ's
 * blocking commands require). The payload is checked against the queue's schema first: a payload
 * that can never be processed fails at once instead of being retried. Failed jobs are kept
 * (DEFAULT_JOB_OPTIONS) for the dashboard.
 */
export function startQueueWorker<Data, Result>(
  services: Services,
  queueName: string,
  schema: z.ZodType<Data>,
  process: (data: Data) => Promise<Result>,
  concurrency: number = services.config.WORKER_CONCURRENCY,
): RunningWorker {
  const { config, logger } = services;
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  connection.on('error', () => {}); // reported by the worker's own 'error' event below
  const worker = new Worker<Data, Result>(
    queueName,
    async (job) => {
      const parsed = schema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid ${queueName} job: ${parsed.error.message}`);
      return process(parsed.data);
    },
    {
      connection,
      prefix: config.BULLMQ_PREFIX,
      concurrency,
      // A worker killed mid-job leaves the job locked; another takes it over once the lock lapses.
      lockDuration: config.JOB_LOCK_SECONDS * 1000,
      stalledInterval: config.JOB_LOCK_SECONDS * 1000,
    },
  );
  worker.on('failed', (job, err) =>
    logger.warn({ queue: queueName, jobId: job?.id, attempt: job?.attemptsMade, err }, 'job failed'),
  );
  worker.on('error', connectionErrors(logger, { queue: queueName }, 'worker error'));
  return {
    // With Redis unreachable a graceful close would wait for it: let go at once instead.
    close: () => (connection.status === 'ready' ? worker.close() : Promise.resolve()),
    release: async () => {
      connection.disconnect();
      await worker.close(true).catch(() => {});
    },
  };
}
