/** What the fault tests share: the service's processes on a database of their own, with a store to sell from. */
import { Queue } from 'bullmq';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { createTestDatabase } from '../helpers/harness.js';
import { openStore, type Store } from '../helpers/load.js';

/** A database handle for the test itself (fixtures and checks), next to the cluster's own connections. */
const testDatabase = (url: string) => connectDatabase(url, { max: 4, applicationName: 'topup-fault-test' });

/** What a fault test works on: its own database, the service's processes on it, a store to sell from. */
export type Scene = {
  database: Awaited<ReturnType<typeof createTestDatabase>>;
  db: Database;
  cluster: Cluster;
  store: Store;
  /** Buffer form of the cluster's code key, for codes added straight to the database. */
  codeKey: Buffer;
  /** The queue `name` of the cluster, from the test's side (close it after use). */
  queue: (name: string) => Queue;
  close: () => Promise<void>;
};

export async function openScene(options: {
  workers?: number;
  env?: Record<string, string>;
  redisUrl?: string;
  /** The URL the service connects through (a proxy in front of the database, say); the database's own by default. */
  serviceDatabaseUrl?: (url: string) => Promise<string>;
  store?: Parameters<typeof openStore>[2];
}): Promise<Scene> {
  const database = await createTestDatabase();
  const db = testDatabase(database.url);
  const redisUrl = options.redisUrl ?? inject('redisUrl');
  const cluster = await startCluster({
    databaseUrl: options.serviceDatabaseUrl ? await options.serviceDatabaseUrl(database.url) : database.url,
    redisUrl,
    workers: options.workers ?? 1,
    env: options.env,
  });
  const codeKey = Buffer.from(cluster.env.CODE_ENCRYPTION_KEY!, 'hex');
  const store = await openStore({ baseUrl: cluster.baseUrl, codeKey }, db.db, options.store);
  return {
    database,
    db,
    cluster,
    store,
    codeKey,
    queue: (name) => new Queue(name, { connection: { url: redisUrl }, prefix: cluster.env.BULLMQ_PREFIX }),
    close: async () => {
      await cluster.stop();
      await db.close();
      await database.drop();
    },
  };
}

export { placeOrders, settled } from '../helpers/load.js';
