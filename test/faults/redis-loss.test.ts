import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { sleep } from '../helpers/processes.js';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.js';
import { openScene, placeOrders, settled, type Scene } from './support.js';

/**
 * Redis stopped under load and started again empty (no persistence): every job it held is gone. Orders
 * accepted meanwhile are still accepted (PostgreSQL is the truth) and the reconciler, running from the
 * worker processes on a timer, gives back to the queues what they lost.
 */
let redis: OwnRedis;
let scene: Scene;
beforeAll(async () => {
  redis = await ownRedis();
  scene = await openScene({ redisUrl: redis.url, env: { JOB_LOCK_SECONDS: '2' } });
});
afterAll(async () => {
  await scene?.close();
  await redis?.close();
});

describe('Redis stopped, then started again empty', () => {
  it('loses no accepted order: the reconciler re-enqueues them from PostgreSQL', async () => {
    const { cluster, store, db } = scene;
    const before = placeOrders(cluster, store, 150, 8);
    await sleep(400);
    await redis.stop();
    // Orders keep coming while Redis is away.
    const during = await placeOrders(cluster, store, 60, 8);
    await redis.start();
    const after = await placeOrders(cluster, store, 60, 8);
    const accepted = [...(await before).accepted, ...during.accepted, ...after.accepted];

    expect(during.transportErrors).toBe(0);
    expect(during.accepted.length, JSON.stringify(during.statuses)).toBeGreaterThan(0);
    await settled(db.sql);
    const report = await checkInvariants(db.sql, accepted);
    expect(violations(report), cluster.logs()).toEqual(NO_VIOLATIONS);
    [cluster.api, ...cluster.workers].forEach((p) => p.ensureRunning());
  }, 180_000);
});
