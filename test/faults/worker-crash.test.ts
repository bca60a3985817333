import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { QUEUE_NAMES } from '../../src/queues/index.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { createTestDatabase } from '../helpers/harness.js';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { sleep } from '../helpers/processes.js';
import { openStore, placeOrders, settled, testDatabase, type Store } from './support.js';

/**
 * Worker processes killed with SIGKILL in the middle of a batch: their jobs are taken over once the
 * locks lapse, and the store ends with every invariant of DESIGN §2 intact.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: ReturnType<typeof testDatabase>;
let cluster: Cluster;
let store: Store;

beforeAll(async () => {
  database = await createTestDatabase();
  db = testDatabase(database.url);
  cluster = await startCluster({
    databaseUrl: database.url,
    redisUrl: inject('redisUrl'),
    workers: 2,
    env: { JOB_LOCK_SECONDS: '2', WORKER_CONCURRENCY: '8' },
  });
  store = await openStore(cluster, db.db);
});
afterAll(async () => {
  await cluster?.stop();
  await db?.close();
  await database?.drop();
});

describe('workers killed mid-batch', () => {
  it('lose no order, deliver no code twice, keep caps and money right', async () => {
    const load = placeOrders(cluster, store, 400, 24);
    // Kill both workers, one after the other, while jobs are in their hands; start fresh ones.
    const queue = new Queue(QUEUE_NAMES.fulfilment, { connection: { url: inject('redisUrl') }, prefix: cluster.env.BULLMQ_PREFIX });
    for (const victim of [0, 1]) {
      await sleep(300);
      // Mid-batch: jobs are in the workers' hands when the kill comes.
      await expect.poll(() => queue.getActiveCount(), { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      cluster.workers[victim]!.process.kill('SIGKILL');
      await cluster.startWorker();
    }
    const { accepted, statuses, transportErrors } = await load;
    await queue.close();
    expect(transportErrors).toBe(0);
    expect(statuses[200]).toBe(accepted.length);
    expect(Object.keys(statuses).filter((s) => s !== '200' && s !== '409')).toEqual([]);

    await settled(db.sql);
    const report = await checkInvariants(db.sql, accepted);
    expect(violations(report), cluster.logs()).toEqual(NO_VIOLATIONS);
    expect(report.ordersByStatus.completed).toBeGreaterThan(0);
    expect(report.ordersByStatus.stock_short).toBeGreaterThan(0);
  }, 180_000);
});
