/**
 * One way to reach Redis (C21): a server, a master through Sentinel, or a Cluster, each real and of the test's
 * own. A setting that points at the wrong kind of Redis refuses the start in one line; the service on a Sentinel
 * set or a Cluster places and fulfils orders, counts rate limits in Redis and drops its caches in every process.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shownName } from '../../src/queues/index.js';
import { createServices } from '../../src/runtime/services.js';
import { storeGauges } from '../../src/startup/gauges.js';
import { buyer, expectJson } from '../helpers/api.js';
import { entryPoints } from '../helpers/entry.js';
import { createCard } from '../helpers/fixtures.js';
import { createTestDatabase, startTestApp, type TestApp } from '../helpers/harness.js';
import { startRedisCluster, startRedisSentinels, type RedisClusterSet, type RedisSentinelSet } from '../helpers/redis-topologies.js';
import { placeCardOrder, stockCodes, waitForStatus, createBuyer } from '../workers/support.js';

let cluster: RedisClusterSet;
let sentinels: RedisSentinelSet;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let keyDir: string;
const { serviceEnv, start, failsWithOneLine, stopAll } = entryPoints({ databaseUrl: () => database.url, keyDir: () => keyDir });

beforeAll(async () => {
  [cluster, sentinels, database] = await Promise.all([startRedisCluster(), startRedisSentinels(), createTestDatabase()]);
  keyDir = await mkdtemp(join(tmpdir(), 'topup-key-'));
}, 60_000);
afterAll(async () => {
  await stopAll();
  await Promise.all([cluster?.stop(), sentinels?.stop(), database?.drop()]);
});

const clusterEnv = () => ({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PASSWORD: cluster.password });
const sentinelEnv = () => ({
  REDIS_SENTINELS: sentinels.sentinels,
  REDIS_SENTINEL_NAME: sentinels.name,
  REDIS_SENTINEL_PASSWORD: sentinels.sentinelPassword,
  REDIS_PASSWORD: sentinels.password,
});

// Each test starts the service as processes of its own: on a busy 2-core machine one start can take 10 s or more.
describe('a Redis setting that cannot work refuses the start in one line (C21)', { timeout: 90_000 }, () => {
  it('two ways to Redis at once name both', async () => {
    const env = await serviceEnv({ ...clusterEnv(), BULLMQ_PREFIX: '{topup}' });
    expect(await failsWithOneLine(start({ ...env, REDIS_URL: 'redis://127.0.0.1:6379' }))).toBe('REDIS_URL, REDIS_CLUSTER_NODES: set only one of them');
  });

  it('REDIS_URL at a sentinel, a replica or a cluster node, each named as what it is', async () => {
    const [master, replica] = sentinels.ports.servers;
    const at = (port: number, password: string) => `redis://:${password}@127.0.0.1:${port}`;
    expect(await failsWithOneLine(start(await serviceEnv({ REDIS_URL: at(sentinels.ports.sentinels[0]!, sentinels.sentinelPassword) })))).toBe(
      `REDIS_URL: 127.0.0.1:${sentinels.ports.sentinels[0]} is a Redis Sentinel, not a Redis server: set REDIS_SENTINELS and REDIS_SENTINEL_NAME instead`,
    );
    const replicaPort = (await sentinels.master()) === master ? replica! : master!;
    expect(await failsWithOneLine(start(await serviceEnv({ REDIS_URL: at(replicaPort, sentinels.password) })))).toBe(
      `REDIS_URL: 127.0.0.1:${replicaPort} is a read-only replica: point REDIS_URL at the master, or use REDIS_SENTINELS`,
    );
    expect(await failsWithOneLine(start(await serviceEnv({ REDIS_URL: at(cluster.ports[0]!, cluster.password) })))).toBe(
      `REDIS_URL: 127.0.0.1:${cluster.ports[0]} is a Redis Cluster node: set REDIS_CLUSTER_NODES instead`,
    );
  });

  it('sentinels that know no master of that name', async () => {
    const line = await failsWithOneLine(start(await serviceEnv({ ...sentinelEnv(), REDIS_SENTINEL_NAME: 'no-such-master' })));
    expect(line).toMatch(/^REDIS_SENTINELS: cannot use the master "no-such-master" through the sentinels 127\.0\.0\.1:\d+,/);
  });
});

describe('/ready proves writes (C21)', () => {
  it('a service pointed at a read-only replica is not ready', async () => {
    const replicaPort = (await sentinels.master()) === sentinels.ports.servers[0] ? sentinels.ports.servers[1] : sentinels.ports.servers[0];
    const app = await startTestApp({ env: { REDIS_URL: `redis://:${sentinels.password}@127.0.0.1:${replicaPort}` } });
    try {
      expect(await expectJson(await app.request('/ready'), 503)).toEqual({ status: 'unavailable', postgres: 'up', redis: 'read_only' });
    } finally {
      await app.close();
    }
  });
});

/** What every topology must give the service: orders fulfilled through its queues, limits and caches shared in Redis. */
function servesTheStore(app: () => TestApp) {
  it('places card orders and its workers fulfil them through the queues', async () => {
    const card = await createCard(app().services.db, { services: [{ price: '1.00' }] });
    await stockCodes(app(), card.services[0]!.id, 10);
    const buyer = await createBuyer(app());
    const utrs = await Promise.all(Array.from({ length: 5 }, () => placeCardOrder(buyer, [[card.services[0]!.id, 1]])));
    for (const utr of utrs) await waitForStatus(app(), utr, 1);
    expect(await expectJson(await app().request('/ready'), 200)).toEqual({ status: 'ready', postgres: 'up', redis: 'up' });
  });

  it('the queue dashboard and /metrics read the queues there', async () => {
    const auth = { Authorization: `Basic ${Buffer.from(`operator:${app().adminToken}`).toString('base64')}` };
    const dashboard = await expectJson(await app().request('/admin/queues/api/queues', { headers: auth }), 200);
    const queues = (dashboard as { queues: Array<{ name: string }> }).queues.map((q) => q.name);
    expect(queues).toEqual(expect.arrayContaining(app().services.queues.all.map((q) => q.name)));
    const metrics = await app().scrape();
    for (const queue of app().services.queues.all) expect(metrics).toContain(`queue_jobs{queue="${shownName(queue)}",state="waiting"}`);
  });

  it('counts failed token exchanges in Redis, never in process memory', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await app().request('/api/generate/authorization-token', { method: 'POST', headers: { PublicKey: 'pk_nobody', SecretKey: 'sk_wrong' } });
      expect(response.status).toBe(401);
    }
    const metrics = await app().scrape();
    expect(metrics).toMatch(/^rate_limit_fallbacks_total 0$/m);
  });

  it('a catalog change in one process empties the catalog cache of another', async () => {
    const other = createServices(app().services.config, storeGauges);
    try {
      let loads = 0;
      const read = () => other.catalogCache.get('probe', async () => ++loads);
      // Entries are kept once the subscription that hears invalidations is confirmed.
      await expect.poll(() => other.catalogCache.live, { timeout: 10_000 }).toBe(true);
      await read();
      const before = loads;
      await app().services.catalogCache.invalidate();
      await expect.poll(async () => (await read(), loads), { timeout: 5000 }).toBe(before + 1);
    } finally {
      await other.close();
    }
  });
}

describe('the service on a Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ workers: true, env: { ...clusterEnv(), BULLMQ_PREFIX: `{topup-${Math.random().toString(36).slice(2, 8)}}` } });
  });
  afterAll(() => app?.close());
  servesTheStore(() => app);
});

describe('the service on a Redis Cluster with a slot per queue (BULLMQ_PREFIX without a hash tag, QUEUE_SHARDS=3)', () => {
  let app: TestApp;
  const prefix = `topup-${Math.random().toString(36).slice(2, 8)}`;
  beforeAll(async () => {
    app = await startTestApp({ workers: true, env: { ...clusterEnv(), BULLMQ_PREFIX: prefix, QUEUE_SHARDS: '3' } });
  });
  afterAll(() => app?.close());
  servesTheStore(() => app);

  it('gives each queue and each fulfilment shard its own hash tag, which the cluster spreads over its masters', async () => {
    const names = app.services.queues.all.map((queue) => queue.name);
    expect(names).toEqual(['{order-fulfilment}', '{order-fulfilment-1}', '{order-fulfilment-2}', '{card-restock}', '{webhook-delivery}', '{top-up-routing}']);
    const masters = new Set(await Promise.all(names.map((name) => cluster.masterOf(`${prefix}:${name}:id`))));
    expect(masters.size).toBeGreaterThanOrEqual(2);
    // Orders are spread over the shards by id, and each shard's worker fulfils its own.
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    await stockCodes(app, card.services[0]!.id, 12);
    const buyer = await createBuyer(app);
    const utrs = await Promise.all(Array.from({ length: 12 }, () => placeCardOrder(buyer, [[card.services[0]!.id, 1]])));
    for (const utr of utrs) await waitForStatus(app, utr, 1);
    const done = await Promise.all(app.services.queues.fulfilmentShards.map((queue) => queue.getCompletedCount()));
    expect(done.filter((count) => count > 0).length, JSON.stringify(done)).toBeGreaterThanOrEqual(2);
    expect(done.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(12);
  });
});

describe('a rate limit while Redis is unreachable', () => {
  it('is decided in process memory, never silently: each decision counts in rate_limit_fallbacks_total', async () => {
    const app = await startTestApp();
    // The same service, pointed at a Redis that is not there (nothing listens on port 1).
    const services = createServices({ ...app.services.config, redis: { kind: 'server', url: 'redis://127.0.0.1:1' } }, storeGauges);
    try {
      const limiter = services.limiter('fallback-probe', 2, 60);
      await limiter.consume('client');
      await limiter.consume('client');
      await expect(limiter.consume('client')).rejects.toMatchObject({ remainingPoints: 0 });
      expect(await services.metrics.render()).toMatch(/^rate_limit_fallbacks_total 3$/m);
    } finally {
      await services.close(Date.now() + 1000);
      await app.close();
    }
  });
});

describe('the service through Redis Sentinel (REDIS_SENTINELS)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ workers: true, env: sentinelEnv() });
  });
  afterAll(() => app?.close());
  servesTheStore(() => app);

  it('after a failover it writes to the new master: /ready answers 200 again and orders are fulfilled', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    await stockCodes(app, card.services[0]!.id, 5);
    const { api } = await buyer(app);
    await sentinels.failover();
    // The old master is a replica now, its connections still open: the service finds the new master by itself.
    await expect.poll(async () => (await app.request('/ready')).status, { timeout: 15_000 }).toBe(200);
    const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    await waitForStatus(app, placed.message.utr as string, 1);
  });
});
