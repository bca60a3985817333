/**
 * The store on a Redis Cluster (three masters, a replica each), behind PgBouncer in transaction mode and HAProxy,
 * with a synchronous PostgreSQL standby: the walk-through unchanged, replicas that share what they must, and
 * faults under load. Each scenario ends with DESIGN §2 checked over the whole database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeShellBlock, runShell } from '../helpers/readme.js';
import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { QUEUE_NAMES, queueNameIn } from '../../src/queues/index.js';
import { buildTopology, expectNoHarm, fulfilmentQueue, JOB_LOCK_SECONDS, jobsHeldBy, QUEUE_SHARDS, report, runScenario, type Topology } from './support.js';

let top: Topology;
beforeAll(async () => {
  top = await buildTopology({ redis: 'cluster' });
});
afterAll(async () => top?.close());

const admin = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { Authorization: `Bearer ${top.env.ADMIN_TOKEN}`, 'Content-Type': 'application/json', ...init.headers } });

describe('the README on a Redis Cluster behind PgBouncer and a load balancer (C21)', () => {
  it('the walk-through runs unchanged', async () => {
    const walkThrough = await readmeShellBlock('Walk-through with curl');
    // Only where the service answers differs: the load balancer instead of `npm start` on port 3000.
    const script = walkThrough.replace(/^B=http:\/\/localhost:3000$/m, `B=${top.apiUrl}`);
    expect(script).not.toBe(walkThrough);
    const { DATABASE_URL, DATABASE_MIGRATION_URL, DATABASE_PREPARED_STATEMENTS, REDIS_CLUSTER_NODES, REDIS_PASSWORD, BULLMQ_PREFIX, CODE_ENCRYPTION_KEY, ADMIN_TOKEN } = top.env;
    // The walk-through's terminal has ADMIN_TOKEN exported, as the README says before it (its operator steps use it).
    const run = await runShell(script, {
      ADMIN_TOKEN: ADMIN_TOKEN!,
      DATABASE_URL: DATABASE_URL!,
      DATABASE_MIGRATION_URL: DATABASE_MIGRATION_URL!,
      DATABASE_PREPARED_STATEMENTS: DATABASE_PREPARED_STATEMENTS!,
      REDIS_CLUSTER_NODES: REDIS_CLUSTER_NODES!,
      REDIS_PASSWORD: REDIS_PASSWORD!,
      BULLMQ_PREFIX: BULLMQ_PREFIX!,
      CODE_ENCRYPTION_KEY: CODE_ENCRYPTION_KEY!,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/"utr":"C[0-9A-Z]+"/);
    expect(run.stdout).toMatch(/Your order number is T[0-9A-Z]+/);
    expect(run.stdout).toMatch(/"status":"success"/);
  });

  it('a token from one API process works on the other, and a catalog change through one is served by the other at once', async () => {
    const [one, two] = top.apiUrls as [string, string];
    const token = top.store.tokens[0]!;
    const services = (url: string) =>
      fetch(`${url}/api/card/services?card_id=${top.store.cards.cardId}`, { headers: { Authorization: token } }).then((r) => r.json()) as Promise<{
        message: { services: Array<{ id: number; price: number | string }> };
      }>;
    // Read (and cache) on the second, change through the first, read on the second again at once.
    const before = (await services(two)).message.services.find((s) => s.id === top.store.cards.stocked)!;
    const price = Number(before.price) + 1;
    expect((await admin(one, `/admin/card-services/${top.store.cards.stocked}`, { method: 'PATCH', body: JSON.stringify({ price: price.toFixed(2) }) })).status).toBe(200);
    const after = (await services(two)).message.services.find((s) => s.id === top.store.cards.stocked)!;
    expect(Number(after.price)).toBe(price);
    // A fresh token from the first process, used at once on the second.
    const fresh = await fetch(`${one}/api/generate/authorization-token`, {
      method: 'POST',
      headers: { PublicKey: top.store.keys[1]!.publicKey, SecretKey: top.store.keys[1]!.secretKey },
    }).then((r) => r.json() as Promise<{ bearer_token: string }>);
    expect((await fetch(`${two}/api/get-category`, { headers: { Authorization: fresh.bearer_token } })).status).toBe(200);
  });
});

describe('queues spread over the cluster', () => {
  it('each queue and each fulfilment shard has a slot of its own, and the masters share them', async () => {
    const { layout, env } = top;
    const names = [
      ...Array.from({ length: QUEUE_SHARDS }, (_, shard) => queueNameIn(layout, QUEUE_NAMES.fulfilment, shard)),
      ...[QUEUE_NAMES.restock, QUEUE_NAMES.webhooks, QUEUE_NAMES.routing].map((name) => queueNameIn(layout, name)),
    ];
    expect(names).toContain('{order-fulfilment-2}');
    const planned = new Set(await Promise.all(names.map((name) => top.redisCluster!.masterOf(`${env.BULLMQ_PREFIX}:${name}:id`))));
    expect(planned.size).toBeGreaterThanOrEqual(2);
    // Orders flow through every shard: the keys are there, on more than one master.
    const result = await runScenario(top, { name: 'Redis Cluster: the queues on their own slots, no fault', inject: async () => 'orders through every shard' });
    expectNoHarm(top, result);
    const client = top.redisConnection() as Cluster;
    try {
      // The cluster client knows its masters once connected.
      if (client.status !== 'ready') await once(client, 'ready');
      const holding = await Promise.all(
        client.nodes('master').map(async (node) => (await node.keys(`${env.BULLMQ_PREFIX}:{order-fulfilment*`)).length),
      );
      expect(holding.filter((keys) => keys > 0).length, JSON.stringify(holding)).toBeGreaterThanOrEqual(2);
      for (let shard = 0; shard < QUEUE_SHARDS; shard++) {
        const queue = top.queue(QUEUE_NAMES.fulfilment, shard);
        expect(await queue.getCompletedCount(), `shard ${shard}`).toBeGreaterThan(0);
        await queue.close();
      }
    } finally {
      client.disconnect();
    }
  });
});

describe('faults under load on the cluster topology (C21)', () => {
  it('a Redis Cluster master killed: its replica takes over, no order is lost', async () => {
    const result = await runScenario(top, {
      name: 'Redis Cluster: the master of a fulfilment shard\'s slot killed (SIGKILL)',
      inject: async ({ redisCluster, env, layout }, faultNow) => {
        const master = await redisCluster!.masterOf(`${env.BULLMQ_PREFIX}:${queueNameIn(layout, QUEUE_NAMES.fulfilment)}:id`);
        let killedAt = 0;
        const { replacedBy } = await redisCluster!.killMaster(master, () => {
          killedAt = Date.now();
          faultNow();
        });
        return `its replica (port ${replacedBy}) served the slots ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`;
      },
    });
    await report(result);
    expectNoHarm(top, result);
  });

  it('an API process and a worker process killed with SIGKILL: the balancer and the other worker carry on', async () => {
    const queue = top.queue(fulfilmentQueue);
    try {
      let held: string[] = [];
      let crashedAt = 0;
      const result = await runScenario(top, {
        name: 'An API process and a worker process killed (SIGKILL)',
        concurrency: 24,
        inject: async (t, faultNow) => {
          const victim = t.workers.find((w) => w.process.exitCode === null && w.process.signalCode === null)!;
          // Frozen (SIGSTOP) with jobs in its hands, then killed: those jobs must be taken over by another worker.
          const deadline = Date.now() + 20_000;
          while (held.length === 0) {
            if (Date.now() > deadline) throw new Error('the worker held no job when it was to be killed');
            victim.process.kill('SIGSTOP');
            crashedAt = Date.now();
            held = await jobsHeldBy(queue, victim);
            if (held.length === 0) victim.process.kill('SIGCONT');
          }
          victim.process.kill('SIGKILL');
          faultNow();
          t.killApi(0);
          await t.startWorker();
        },
      });
      // The killed worker's jobs ran elsewhere within the lock plus one stalled-job check (README: Scaling).
      const finished = await Promise.all(held.map(async (id) => (await queue.getJob(id))?.finishedOn ?? Number.POSITIVE_INFINITY));
      const takeover = (Math.max(...finished) - crashedAt) / 1000;
      result.note = `the killed worker's ${held.length} jobs finished elsewhere within ${takeover.toFixed(1)} s (JOB_LOCK_SECONDS=${JOB_LOCK_SECONDS})`;
      await report(result);
      expectNoHarm(top, result);
      expect(takeover).toBeLessThanOrEqual(JOB_LOCK_SECONDS + 5);
    } finally {
      await queue.close();
      if (top.apis[0]!.process.exitCode !== null || top.apis[0]!.process.signalCode !== null) await top.startApi(0);
    }
  });

  it('an API process stopped with SIGTERM under load: the balancer takes it out first, no request fails', async () => {
    const result = await runScenario(top, {
      name: 'An API process stopped with SIGTERM (a rolling restart)',
      inject: async (t) => {
        const api = t.apis[1]!;
        api.process.kill('SIGTERM');
        await api.exit;
        await t.startApi(1);
      },
    });
    await report(result);
    expectNoHarm(top, result);
    // On failure: the answers, and how HAProxy ended each request that did not end in 200 (its termination flags).
    const balancerLog = top.haproxy.log().split('\n').filter((line) => line && !/ 200 \d/.test(line)).slice(-30).join('\n');
    // A request left unanswered for 20 s happens on this loaded machine without any fault too, and its client sends
    // it again; a refused or cut-off connection, a 502 or a 503 would be the restart's doing.
    expect(
      { answered502: result.answered502, answered503: result.answered503, connectionFailures: result.connectionFailures },
      `${JSON.stringify(result.answers)}\n${balancerLog}`,
    ).toEqual({ answered502: 0, answered503: 0, connectionFailures: 0 });
  });

  it('the PostgreSQL primary crashed and its synchronous standby promoted: 503s during the switch, then orders flow, none lost', async () => {
    const result = await runScenario(top, {
      name: 'PostgreSQL: the primary crashed, the synchronous standby promoted, HAProxy repointed',
      inject: async ({ postgres, haproxy, apiUrls }) => {
        const started = Date.now();
        await postgres.crashPrimary();
        // Repointed before the promotion: while the standby is still read-only, /ready says so (and writes get 503).
        await haproxy.repointPostgres({ host: '127.0.0.1', port: postgres.standbyPort });
        await expect
          .poll(async () => ((await (await fetch(`${apiUrls[0]}/ready`)).json()) as { postgres: string }).postgres, { timeout: 15_000 })
          .toBe('read_only');
        await postgres.promoteStandby();
        return `the standby took writes ${((Date.now() - started) / 1000).toFixed(1)} s after the crash`;
      },
    });
    await report(result);
    expectNoHarm(top, result);
    // The service said so while the primary was away, and came back by itself.
    expect(result.answered503).toBeGreaterThan(0);
  });
});
