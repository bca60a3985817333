import { connectDatabase, type ConnectOptions, type Database } from '../db/client.js';
import type { Config } from '../core/env.js';
import { until } from '../lib/deadline.js';
import { connectionErrors, createLogger, type LogDestination, type Logger } from '../lib/logger.js';
import { createMetrics, type Metrics, type ScrapeSources } from '../lib/metrics.js';
import { requestLoad, type RequestLoad } from '../lib/load.js';
import { createLimiter, type LimiterFactory } from '../lib/rate-limit.js';
import { connectRedis, type RedisClient } from '../lib/redis.js';
import { SharedCache } from '../lib/shared-cache.js';
import { ChangeStamps, ownedStamps, type OwnedStamps } from '../lib/change-stamps.js';
import { StampedCache } from '../lib/stamped-cache.js';

import { createQueues, queueLayout, shownName, type Queues } from '../queues/index.js';

/**
 * An order list page as it is kept: the account's count, the entries' text sealed whole under the process's own key
 * (its card codes are never kept in the clear), and the utr of its last entry (the next page's cursor).
 */
export type KeptOrderPage = { total: number | null; entries: Buffer; last: string | undefined };

/** Everything a request handler, a worker or a CLI command may use; built once per process by createServices. */
export type Services = Database & {
  config: Config;
  /** General-purpose Redis commands: rate limits, cache invalidation. Not for BullMQ workers. */
  redis: RedisClient;
  queues: Queues;
  logger: Logger;
  /** This process's series for GET /metrics (C16). */
  metrics: Metrics;
  /** How many requests this process answers at once, on average: the worker process `npm start` forks yields to it. */
  load: RequestLoad;
  /** Catalog reads (products, services, campaign), dropped in every process on catalog changes. */
  catalogCache: SharedCache;
  /** Bearer-token lookups (A1 tokens), 30 s at most. */
  tokenCache: SharedCache;
  /** The stamps of the order lists' pages: a change to an account's orders, or to what every entry shows, drops them. */
  orderPages: OwnedStamps;
  /**
   * Order list pages, sealed (codes are never kept in the clear), each served while its stamp holds and for at most
   * ORDER_PAGES_CACHE_MS.
   */
  orderPageCache: StampedCache<KeptOrderPage>;
  /**
   * `draining`: set once the process starts draining (SIGTERM): /ready then answers 503, so a load balancer stops
   * sending (C21). `workers`: the state of the worker process `npm start` supervises (absent in other processes).
   */
  lifecycle: { draining: boolean; workers?: WorkerProcessState };
  /** Rate limiters kept in Redis; while Redis is unreachable one in process memory stands in, logged and counted. */
  limiter: LimiterFactory;
};

/** A supervised worker process: forked and not ready yet, taking jobs, or ended and waiting for its next start. */
export type WorkerProcessState = 'starting' | 'up' | 'down';

/** The order list pages a process keeps, in bytes of their sealed text: 32 MiB. */
const ORDER_PAGES_CACHE_BYTES = 32 * 2 ** 20;

/** The queue states /metrics reports. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** The gauges /metrics reads from the store's tables at scrape time, given by start-up (src/startup/gauges.ts). */
export type StoreGauges = (db: Database['db']) => Omit<ScrapeSources, 'queueJobs'>;

export type ServiceOptions = Pick<ConnectOptions, 'onQuery'> & {
  /** Where the log lines go: stderr unless the process shows them otherwise (the CLI, above its progress bar). */
  logDestination?: LogDestination;
};

/** Opens the connections one process needs. The caller closes them with `close()`. */
export function createServices(config: Config, gauges: StoreGauges, { onQuery, logDestination }: ServiceOptions = {}): Services {
  const database = connectDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, prepare: config.DATABASE_PREPARED_STATEMENTS, onQuery });
  const redis = connectRedis(config.redis, 'commands');
  const logger = createLogger(config.LOG_LEVEL, logDestination);
  redis.on('error', connectionErrors(logger, {}, 'redis connection error'));
  // Producers fail fast when Redis is down (the order is committed already and the reconciler
  // enqueues it later), so they get their own connection with a bounded retry per command.
  const queueConnection = connectRedis(config.redis, 'producer');
  queueConnection.on('error', () => {});
  const queues = createQueues(queueConnection, config.BULLMQ_PREFIX, queueLayout(config));
  for (const queue of queues.all) queue.on('error', connectionErrors(logger, { queue: shownName(queue) }, 'queue connection error'));
  const subscriber = connectRedis(config.redis, 'subscriber');
  subscriber.on('error', () => {});
  // Short-lived on purpose: counters such as offered_sell and sell_count change with every sale
  // without an invalidation; prices change only through campaign sync, which invalidates.
  const catalogCache = new SharedCache(subscriber, redis, `${config.BULLMQ_PREFIX}:catalog-changed`, 2000);
  const tokenCache = new SharedCache(subscriber, redis, `${config.BULLMQ_PREFIX}:tokens-changed`, 30_000);
  const metrics = createMetrics({
    // On the producers' connection: with Redis down it fails at once instead of queueing the commands.
    queueJobs: async () =>
      (
        await Promise.all(
          queues.all.map(async (queue) => {
            const counts = await queue.getJobCounts(...QUEUE_STATES);
            return QUEUE_STATES.map((state) => ({ queue: shownName(queue), state, count: counts[state] ?? 0 }));
          }),
        )
      ).flat(),
    ...gauges(database.db),
  });
  // On the producers' connection: while Redis is away a stamp fails at once, and a page is read without the cache.
  const pageStamps = new ChangeStamps(queueConnection, config.BULLMQ_PREFIX, 'order-pages');
  const pages = ownedStamps(pageStamps);
  const orderPageCache = new StampedCache<KeptOrderPage>({
    maxAgeMs: config.ORDER_PAGES_CACHE_MS,
    maxSize: ORDER_PAGES_CACHE_BYTES,
    sizeOf: (page) => page.entries.length,
    onServed: (from) => metrics.orderPageServed(from === 'memory' ? 'memory' : 'database'),
  });
  const fellBack = connectionErrors(logger, {}, 'Redis unreachable: rate limits are counted in this process only until it is back');
  const limiter: LimiterFactory = (keyPrefix, points, durationSeconds) =>
    createLimiter(redis, {
      keyPrefix,
      points,
      durationSeconds,
      onFallback: () => {
        metrics.rateLimitFellBack();
        fellBack(undefined);
      },
    });
  return {
    ...database,
    config,
    redis,
    queues,
    logger,
    metrics,
    load: requestLoad(),
    catalogCache,
    tokenCache,
    orderPages: pages,
    orderPageCache,
    limiter,
    lifecycle: { draining: false },
    close: async (deadline = Date.now() + 5000) => {
      catalogCache.close();
      tokenCache.close();
      // Closing a queue waits for Redis; an unreachable Redis must not hold the stop past its deadline. The last
      // changes' page stamps are dropped before the connection goes.
      await until(deadline, Promise.all([queues.close(), pageStamps.settled()]));
      queueConnection.disconnect();
      redis.disconnect();
      await database.close(deadline);
    },
  };
}
