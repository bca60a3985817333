import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import type { z } from 'zod';
import type { Services } from '../src/runtime/services.js';
import { connectionErrors, type Logger } from '../src/lib/logger.js';
import { connectRedis } from '../src/lib/redis.js';
import { shownName } from '../src/queues/index.js';

/**
 * `close()` stops taking jobs and waits for the running ones; `release()` then drops the connection at
 * once, so a stop never waits on an unreachable Redis (a job cut short is retried: handlers are idempotent).
 */
export type RunningWorker = { close: () => Promise<void>; release: () => Promise<void> };

const WORKER_NAME = `${hostname()}:${process.pid}`;

/** The longest wait between two checks for stalled jobs (one small script per queue and worker process). */
export const STALLED_CHECK_MS = 5000;

/** Checked often enough that a lapsed lock is noticed within STALLED_CHECK_MS, and at least twice per lock. */
const stalledCheckMs = (lockSeconds: number) => Math.max(500, Math.min(STALLED_CHECK_MS, (lockSeconds * 1000) / 2));

/** What a handler gets besides the payload: a logger whose lines name the job and the request behind it. */
export type JobContext = { logger: Logger };

/**
 * The job as its log lines name it: queue, job id, and the order (utr) and the request id that placed it,
 * when the payload has them (payloads hold ids only, never secrets).
 */
function jobFields(queue: string, job: Job | undefined) {
  const { utr, requestId } = (job?.data ?? {}) as { utr?: unknown; requestId?: unknown };
  return {
    queue,
    jobId: job?.id,
    ...(typeof utr === 'string' ? { utr } : {}),
    ...(typeof requestId === 'string' ? { requestId } : {}),
  };
}

/**
 * A typed BullMQ worker on a Redis connection of its own (maxRetriesPerRequest: null, as BullMQ's
 * blocking commands require). The payload is checked against the queue's schema first: a payload
 * that can never be processed fails at once instead of being retried. Failed jobs are kept
 * (DEFAULT_JOB_OPTIONS) for the dashboard. Every run logs a start and a finish (or failure) line and is
 * measured (job_duration_seconds, jobs_failed_total).
 */
export function startQueueWorker<Data, Result>(
  services: Services,
  queue: Queue<Data>,
  schema: z.ZodType<Data>,
  process: (data: Data, job: JobContext) => Promise<Result>,
  concurrency: number = services.config.WORKER_CONCURRENCY,
): RunningWorker {
  const { config, logger, metrics } = services;
  // Logs and metrics name the queue without its hash tag's braces.
  const queueName = shownName(queue);
  const connection = connectRedis(config.redis, 'blocking');
  connection.on('error', () => {}); // reported by the worker's own 'error' event below
  const worker = new Worker<Data, Result>(
    queue.name,
    async (job) => {
      const parsed = schema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid ${queueName} job: ${parsed.error.message}`);
      const { utr, ...context } = jobFields(queueName, job);
      // The utr goes on the start and finish lines only: the handler's own lines name it themselves.
      const jobLogger = logger.child(context);
      jobLogger.info({ utr, attempt: job.attemptsMade + 1 }, 'job started');
      const started = performance.now();
      try {
        const result = await process(parsed.data, { logger: jobLogger });
        jobLogger.info({ utr, durationMs: Math.round(performance.now() - started) }, 'job finished');
        return result;
      } finally {
        metrics.jobRan(queueName, (performance.now() - started) / 1000);
      }
    },
    {
      connection,
      prefix: config.BULLMQ_PREFIX,
      concurrency,
      // Stored on every job it takes (`processedBy`, shown by the dashboard): which host and process ran it.
      name: WORKER_NAME,
      // A worker killed mid-job leaves the job locked; another takes it over once the lock has lapsed and the
      // next check for stalled jobs has seen it: within JOB_LOCK_SECONDS plus at most STALLED_CHECK_MS.
      lockDuration: config.JOB_LOCK_SECONDS * 1000,
      stalledInterval: stalledCheckMs(config.JOB_LOCK_SECONDS),
    },
  );
  // Also for jobs that never reached a handler (a bad payload, a job stalled too often).
  worker.on('failed', (job, err) => {
    metrics.jobFailed(queueName);
    logger.warn({ ...jobFields(queueName, job), attempt: job?.attemptsMade, err }, 'job failed');
  });
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
