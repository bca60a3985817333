import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/queues/index.js';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { sleep } from '../helpers/processes.js';
import { openScene, placeOrders, settled, type Scene } from './support.js';

/**
 * Worker processes killed with SIGKILL in the middle of a batch: their jobs are taken over once the
 * locks lapse, and the store ends with every invariant of DESIGN §2 intact.
 */
let scene: Scene;
beforeAll(async () => {
  scene = await openScene({ workers: 2, env: { JOB_LOCK_SECONDS: '2', WORKER_CONCURRENCY: '8' } });
});
afterAll(async () => scene?.close());

describe('workers killed mid-batch', () => {
  it('lose no order, deliver no code twice, keep caps and money right', async () => {
    const { cluster, store, db } = scene;
    // Enough orders that jobs are still coming when the second worker is killed (fulfilment is fast).
    const load = placeOrders(cluster, store, 1500, 24);
    // Kill both workers, one after the other, while jobs are in their hands; start fresh ones.
    const queue = scene.queue(QUEUE_NAMES.fulfilment);
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
