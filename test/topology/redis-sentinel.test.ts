/**
 * The store through Redis Sentinel (one master, one replica, three sentinels), behind PgBouncer in transaction mode
 * and HAProxy, with a synchronous PostgreSQL standby: the master failed over under order load. The scenario ends
 * with DESIGN §2 checked over the whole database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTopology, expectNoHarm, report, runScenario, type Topology } from './support.js';

let top: Topology;
beforeAll(async () => {
  top = await buildTopology({ redis: 'sentinel' });
});
afterAll(async () => top?.close());

describe('faults under load on the Sentinel topology (C21)', () => {
  it('the Sentinel master failed over: every process follows the new master, no order is lost', async () => {
    const result = await runScenario(top, {
      name: 'Redis Sentinel: the master failed over (SENTINEL FAILOVER), the old master now a read-only replica',
      inject: async ({ sentinels }, faultNow) => {
        faultNow();
        const started = Date.now();
        const { from, to } = await sentinels!.failover();
        return `the sentinels named ${to} instead of ${from} ${((Date.now() - started) / 1000).toFixed(1)} s after the command`;
      },
    });
    await report(result);
    expectNoHarm(top, result);
    // Both API processes answer ready again: they write to the new master, not the old one (READONLY).
    for (const url of top.apiUrls) {
      await expect.poll(async () => (await fetch(`${url}/ready`)).status, { timeout: 10_000 }).toBe(200);
    }
  });
});
