import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { sleep } from '../helpers/processes.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { openScene, placeOrders, settled, type Scene } from './support.js';

/**
 * PostgreSQL failing under the service: every backend of the service terminated mid-load (as a failover
 * or a restart does), and the database unreachable for a while. The processes stay up, answer 503 while
 * the database is away, recover by themselves, and the store ends with DESIGN §2 intact.
 */
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let scene: Scene;
beforeAll(async () => {
  scene = await openScene({
    env: { JOB_LOCK_SECONDS: '2' },
    // The service reaches PostgreSQL through a relay the test can cut.
    serviceDatabaseUrl: async (url) => {
      const direct = new URL(url);
      proxy = await tcpProxy(Number(direct.port || 5432), direct.hostname);
      direct.port = String(proxy.port());
      return direct.toString();
    },
  });
});
afterAll(async () => {
  await scene?.close();
  await proxy?.close();
});

/** Terminates every backend the service holds on its database, as `pg_terminate_backend` or a restart would. */
const terminateServiceBackends = async () =>
  (
    await scene.db.sql<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = ${scene.database.name} and application_name = 'topup-store'`
  )[0]!.n;

describe('PostgreSQL backends terminated mid-load', () => {
  it('the processes stay up, every request is answered (200, 409 or 503), and the store settles intact', async () => {
    const { cluster, store, db } = scene;
    const load = placeOrders(cluster, store, 1500, 32);
    // A burst of failovers: every backend of the service terminated 20 times, 200 ms apart, while orders arrive.
    let terminated = 0;
    for (let i = 0; i < 20; i++) {
      await sleep(200);
      terminated += await terminateServiceBackends();
    }
    const { accepted, statuses, transportErrors, unexpected } = await load;
    expect(terminated).toBeGreaterThan(0);
    expect(transportErrors).toBe(0);
    expect(unexpected, `${JSON.stringify(statuses)}\n${cluster.logs()}`).toEqual([]);
    [cluster.api, ...cluster.workers].forEach((p) => p.ensureRunning());

    await settled(db.sql, undefined, cluster.logs);
    const report = await checkInvariants(db.sql, accepted);
    expect(violations(report), cluster.logs()).toEqual(NO_VIOLATIONS);
  }, 180_000);

  it('while the database is unreachable the API answers 503 quickly, and recovers by itself', async () => {
    const { cluster, store, db } = scene;
    await proxy.cut();
    const started = Date.now();
    const down = await fetch(`${cluster.baseUrl}/api/card/make-order`, {
      method: 'POST',
      headers: { Authorization: store.tokens[0]!, 'Content-Type': 'application/json' },
      body: JSON.stringify({ service_ids: [store.cards.stocked], quantities: [1] }),
    });
    // The token check may be cached; either way the order needs the database.
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'failed', request_id: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(8000);
    expect((await fetch(`${cluster.baseUrl}/ready`)).status).toBe(503);

    await proxy.restore();
    await expect.poll(async () => (await fetch(`${cluster.baseUrl}/ready`)).status, { timeout: 20_000 }).toBe(200);
    const { accepted, statuses } = await placeOrders(cluster, store, 40, 4);
    expect(statuses[200]).toBe(40);
    [cluster.api, ...cluster.workers].forEach((p) => p.ensureRunning());
    await settled(db.sql);
    expect(violations(await checkInvariants(db.sql, accepted)), cluster.logs()).toEqual(NO_VIOLATIONS);
  }, 120_000);
});
