import type { Redis } from 'ioredis';
import type { Config } from '../env.js';
import type { Database } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import type { SharedCache } from '../lib/shared-cache.js';
import type { Queues } from '../queues/index.js';

/** Everything a request handler or a worker may use; built once per process by createServices. */
export type Services = Database & {
  config: Config;
  /** General-purpose Redis commands: rate limits, cache invalidation. Not for BullMQ workers. */
  redis: Redis;
  queues: Queues;
  logger: Logger;
  /** Catalog reads (products, services, campaign), dropped in every process on catalog changes. */
  catalogCache: SharedCache;
  /** Bearer-token lookups (A1 tokens), 30 s at most. */
  tokenCache: SharedCache;
};

/** The authenticated caller of Interface A. */
export type AuthAccount = { id: number; currency: string; currencySymbol: string };

/** Which envelope a failure is rendered in: Interface A (`failed`/`errors`) or B (`error`/`msg`). */
export type Envelope = 'A' | 'B';

export type AppEnv = {
  Variables: {
    services: Services;
    requestId: string;
    envelope: Envelope;
    account: AuthAccount;
  };
};
