/**
 * The store past one box, built on this machine from real components (DESIGN C21): a PostgreSQL primary with a
 * synchronous standby behind HAProxy, PgBouncer in transaction mode in front of it, a Redis Cluster or a Sentinel
 * set, two API processes behind HAProxy and two worker processes. Scenarios put faults into it under order load
 * and end with DESIGN §2 checked over the whole database.
 */
import { randomBytes } from 'node:crypto';
import { access, appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { Redis, type Cluster } from 'ioredis';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { QUEUE_NAMES, queueNameIn, SINGLE_SLOT, type QueueLayout } from '../../src/queues/index.js';
import { startHaProxy, type HaProxy } from '../helpers/haproxy.js';
import { expect } from 'vitest';
import { checkInvariants, NO_VIOLATIONS, violations, type InvariantReport } from '../helpers/invariants.js';
import { openStore, placeOrders, settled, type LoadResult, type Store } from '../helpers/load.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { startPostgresPair, type PostgresPair } from '../helpers/postgres-servers.js';
import { ROOT, runEntry, runWorkerProcess, waitForHttp, type Run } from '../helpers/processes.js';
import { startRedisCluster, startRedisSentinels, type RedisClusterSet, type RedisSentinelSet } from '../helpers/redis-topologies.js';
import { freePort, sleep, until } from '../helpers/system.js';

/** How long a worker holds a job between renewals here: a killed worker's jobs must run elsewhere within this plus 5 s. */
export const JOB_LOCK_SECONDS = 5;

export type Topology = {
  /** The API behind the load balancer. */
  apiUrl: string;
  /** Each API process's own address, for what one replica must see of another. */
  apiUrls: string[];
  /** The settings of C21 every process of the service runs with. */
  env: Record<string, string>;
  haproxy: HaProxy;
  bouncer: PgBouncer;
  postgres: PostgresPair;
  redisCluster: RedisClusterSet | null;
  sentinels: RedisSentinelSet | null;
  /** The test's own connection, through the primary's stable address (never the pooler). */
  db: Database;
  store: Store;
  /** The API process in each slot now (a killed one is replaced on the same port). */
  apis: Run[];
  /** Every worker process started, living or not. */
  workers: Run[];
  killApi: (slot: number) => void;
  startApi: (slot: number) => Promise<Run>;
  startWorker: () => Promise<Run>;
  /** A queue of the service (a shard of it), from the test's side (closed by the caller). */
  queue: (name: string, shard?: number) => Queue;
  /** How the service lays its queues out in this Redis. */
  layout: QueueLayout;
  /** A client of this topology's Redis (closed by the caller). */
  redisConnection: () => Redis | Cluster;
  logs: () => string;
  close: () => Promise<void>;
};

export async function buildTopology({ redis }: { redis: 'cluster' | 'sentinel' }): Promise<Topology> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const postgres = await startPostgresPair({ synchronous: true });
    stops.push(postgres.stop);
    const apiPorts = [await freePort(), await freePort()];
    const haproxy = await startHaProxy({
      apis: apiPorts.map((port) => ({ host: '127.0.0.1', port })),
      postgres: { host: '127.0.0.1', port: postgres.primaryPort },
    });
    stops.push(haproxy.stop);
    const bouncer = await startPgBouncer(haproxy.postgres, { poolSize: 30 });
    stops.push(bouncer.stop);
    const redisCluster = redis === 'cluster' ? await startRedisCluster() : null;
    const sentinels = redis === 'sentinel' ? await startRedisSentinels() : null;
    if (redisCluster) stops.push(redisCluster.stop);
    if (sentinels) stops.push(sentinels.stop);

    const database = 'topup';
    const env: Record<string, string> = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${bouncer.port}/${database}`,
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_MIGRATION_URL: `postgres://postgres@127.0.0.1:${haproxy.postgres.port}/${database}`,
      DATABASE_POOL_SIZE: '8',
      ...(redisCluster
        ? { REDIS_CLUSTER_NODES: redisCluster.nodes, REDIS_PASSWORD: redisCluster.password }
        : {
            REDIS_SENTINELS: sentinels!.sentinels,
            REDIS_SENTINEL_NAME: sentinels!.name,
            REDIS_SENTINEL_PASSWORD: sentinels!.sentinelPassword,
            REDIS_PASSWORD: sentinels!.password,
          }),
      // On the cluster each queue has a slot of its own (no hash tag in the prefix) and fulfilment is in three shards.
      ...(redisCluster
        ? { BULLMQ_PREFIX: `topology-${randomBytes(3).toString('hex')}`, QUEUE_SHARDS: String(QUEUE_SHARDS) }
        : { BULLMQ_PREFIX: `{topology-${randomBytes(3).toString('hex')}}` }),
      CODE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: `admin-${randomBytes(12).toString('hex')}`,
      HOST: '127.0.0.1',
      TRUST_PROXY: 'true',
      // HAProxy asks /ready every 500 ms and takes a server out after two failures.
      SHUTDOWN_DRAIN_DELAY_MS: '1500',
      JOB_LOCK_SECONDS: String(JOB_LOCK_SECONDS),
      LOG_LEVEL: 'warn',
    };
    const apis: Run[] = [];
    const workers: Run[] = [];
    const apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
    const startApi = async (slot: number) => {
      const api = runEntry('src/main.ts', { ...env, RUN_WORKERS: 'false', PORT: String(apiPorts[slot]) });
      apis[slot] = api;
      await waitForHttp(`${apiUrls[slot]}/ready`, api);
      return api;
    };
    const startWorker = async () => {
      const worker = await runWorkerProcess(env);
      workers.push(worker);
      return worker;
    };
    stops.push(async () => Promise.all([...apis, ...workers].map((p) => p.stop())));
    // The first API process creates and migrates the database and seeds the demo data, as `npm start` does.
    await startApi(0);
    await startApi(1);
    await startWorker();
    await startWorker();
    // Both API processes in rotation before any load.
    await until('both API processes in rotation', async () => Object.values(await haproxy.apiStates()).every((state) => state === 'UP'));

    const db = connectDatabase(env.DATABASE_MIGRATION_URL!, { max: 4, applicationName: 'topup-topology-test' });
    stops.push(() => db.close());
    const codeKey = Buffer.from(env.CODE_ENCRYPTION_KEY!, 'hex');
    const store = await openStore({ baseUrl: haproxy.apiUrl, codeKey }, db.db, { buyers: 16, stocked: 4000, scarce: 200 });
    // The test's own client: its failures during a failover show as rejected commands, not as unhandled events.
    const layout: QueueLayout = redisCluster ? { ownSlots: true, fulfilmentShards: QUEUE_SHARDS } : SINGLE_SLOT;
    const redisConnection = () => {
      const client = redisCluster
        ? new Redis.Cluster(redisCluster.nodes.split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })), {
            redisOptions: { password: redisCluster.password, maxRetriesPerRequest: null },
          })
        : new Redis({ sentinels: sentinels!.ports.sentinels.map((port) => ({ host: '127.0.0.1', port })), name: sentinels!.name, sentinelPassword: sentinels!.sentinelPassword, password: sentinels!.password, maxRetriesPerRequest: null });
      client.on('error', () => {});
      return client;
    };
    return {
      apiUrl: haproxy.apiUrl,
      apiUrls,
      env,
      haproxy,
      bouncer,
      postgres,
      redisCluster,
      sentinels,
      db,
      store,
      apis,
      workers,
      killApi: (slot) => void apis[slot]!.process.kill('SIGKILL'),
      startApi,
      startWorker,
      queue: (name, shard = 0) => new Queue(queueNameIn(layout, name, shard), { connection: redisConnection(), prefix: env.BULLMQ_PREFIX }),
      layout,
      redisConnection,
      logs: () => [...apis, ...workers].map((p, i) => `--- process ${i}\n${p.stderr().slice(-3000)}`).join('\n'),
      close: async () => {
        for (const stop of stops.reverse()) await stop().catch(() => {});
        await keepLogs([...apis, ...workers], haproxy);
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw err;
  }
}

/** With TOPOLOGY_LOGS set (a directory), every process's full log and HAProxy's are written there at the end. */
async function keepLogs(processes: Run[], haproxy: HaProxy): Promise<void> {
  const dir = process.env.TOPOLOGY_LOGS;
  if (!dir) return;
  const at = resolve(ROOT, dir, new Date().toISOString().replace(/[:.]/g, '-'));
  await mkdir(at, { recursive: true });
  await Promise.all(processes.map((p, i) => writeFile(join(at, `process-${i}-${p.process.pid}.log`), p.stderr())));
  await writeFile(join(at, 'haproxy.log'), haproxy.log());
}

/** One scenario's line of the report. */
export type ScenarioResult = {
  scenario: string;
  /** Orders whose utr the service returned. */
  accepted: number;
  /**
   * Answers 503 (a dependency down), 502 (the balancer lost the process), requests without an answer, and of
   * those the ones refused or cut off (rather than unanswered within 20 s).
   */
  answered503: number;
  answered502: number;
  noAnswer: number;
  connectionFailures: number;
  /** Accepted orders not in the database. */
  lost: number;
  codesDeliveredTwice: number;
  /** Balances that differ from their ledger, and orders whose money moved other than once. */
  moneyMismatches: number;
  /** Orders left where a settled store never leaves them. */
  unsettled: number;
  /** From the fault to the first order placed after it that moved on (completed or stock_short). */
  secondsUntilOrdersFlowed: number;
  /** Anything else the scenario measured (the takeover of a killed worker's jobs, say). */
  note: string;
  /** A few bodies of each answer other than 200, for a failing test's message. */
  answers: Record<number, string[]>;
  invariants: InvariantReport;
};

export type Scenario = {
  name: string;
  /** Clients placing orders at once (each sends an order again on 502/503, with its Idempotency-Key). */
  concurrency?: number;
  /** Load before the fault. */
  warmUpMs?: number;
  /**
   * Puts the fault in, calling `faultNow` at the moment it strikes (the kill, the failover command) when that is not
   * its start; what it returns goes into the report's note.
   */
  inject: (top: Topology, faultNow: () => void) => Promise<string | void>;
};

/**
 * Places orders through the balancer, puts the fault in, keeps placing until orders placed after the fault move on
 * again (and a little longer), then waits for the store to settle and checks every invariant of DESIGN §2.
 */
export async function runScenario(top: Topology, { name, concurrency = 16, warmUpMs = 2000, inject }: Scenario): Promise<ScenarioResult> {
  const stop = new AbortController();
  let faultAt = Number.POSITIVE_INFINITY;
  const accepted: Array<{ utr: string; sentAt: number }> = [];
  const load: Promise<LoadResult> = placeOrders({ baseUrl: top.apiUrl }, top.store, Number.MAX_SAFE_INTEGER, concurrency, {
    retries: 30,
    signal: stop.signal,
    onAccepted: (utr, sentAt) => accepted.push({ utr, sentAt }),
  });
  let note = '';
  try {
    await sleep(warmUpMs);
    faultAt = Date.now();
    note = (await inject(top, () => (faultAt = Date.now()))) ?? '';
    const placedAfterFault = () => accepted.filter((a) => a.sentAt >= faultAt).map((a) => a.utr);
    const flowed = await firstMovedOn(top, placedAfterFault, 120_000);
    await sleep(1500);
    stop.abort();
    const result = await load;
    await settled(top.db.sql, 180_000, top.logs);
    const invariants = await checkInvariants(top.db.sql, result.accepted);
    return {
      scenario: name,
      accepted: result.accepted.length,
      answered503: result.statuses[503] ?? 0,
      answered502: result.statuses[502] ?? 0,
      noAnswer: result.transportErrors,
      connectionFailures: result.connectionFailures,
      lost: invariants.lostOrders,
      codesDeliveredTwice: invariants.codesDeliveredTwice,
      moneyMismatches: invariants.ledgerMismatches + invariants.orderMoneyMismatches,
      unsettled: invariants.unsettledOrders,
      secondsUntilOrdersFlowed: Math.max(0, (flowed - faultAt) / 1000),
      note: [note, ...result.unexpected.map((u) => `unexpected: ${u}`)].filter(Boolean).join('; '),
      answers: result.samples,
      invariants,
    };
  } finally {
    stop.abort();
    await load.catch(() => {});
  }
}

/** When the first of the orders placed after the fault moved on (completed or stock_short), in epoch ms. */
async function firstMovedOn(top: Topology, placed: () => string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const utrs = placed();
    if (utrs.length) {
      const [row] = await top.db.sql<{ at: number | null }[]>`
        select (extract(epoch from min(coalesce(completed_at, updated_at))) * 1000)::float8 as at
        from orders where utr = any(${utrs}) and status in (1, 3)`.catch(() => [{ at: null }]);
      if (row?.at) return row.at;
    }
    if (Date.now() > deadline) throw new Error(`no order placed after the fault moved on within ${timeoutMs} ms\n${top.logs()}`);
    await sleep(200);
  }
}

/** Every scenario's promise (C21): nothing accepted is lost, no code goes out twice, money adds up, all settled. */
export function expectNoHarm(top: Topology, result: ScenarioResult): void {
  expect(violations(result.invariants), `${JSON.stringify(result)}\n${top.logs()}`).toEqual(NO_VIOLATIONS);
  expect(result.accepted).toBeGreaterThan(0);
  expect(result.note, top.logs()).not.toMatch(/unexpected:/);
}

/** The queue's fulfilment jobs a given worker process holds now (BullMQ records the worker's name on the job). */
export async function jobsHeldBy(queue: Queue, worker: Run): Promise<string[]> {
  const name = `:${worker.process.pid}`;
  const active = await queue.getActive();
  return active.filter((job) => job.processedBy?.endsWith(name)).map((job) => job.id!);
}

export const fulfilmentQueue = QUEUE_NAMES.fulfilment;

/** The fulfilment queue's shards on the cluster topology. */
export const QUEUE_SHARDS = 3;

const REPORT_HEADER = `# Topology report

\`TOPOLOGY_REPORT=reports/topology.md npm run test:topology\` on one 2-core machine: PostgreSQL 15 primary with a
synchronous standby behind HAProxy, PgBouncer 1.18 in transaction mode, two API processes behind HAProxy, two
worker processes, a Redis Cluster (three masters, a replica each) or a Sentinel set; card and top-up orders from 16
clients throughout (each sends an order again after a 502, a 503 or no answer, with its Idempotency-Key). After each
fault the store settles and DESIGN §2 is checked over the whole database.

- *accepted*: orders whose utr the service returned; *lost*: accepted orders not in the database.
- *no answer*: requests cut off or left unanswered for 20 s (sent again by their client).
- *flowed again*: seconds from the fault to the first order placed after it that moved on (completed or stock_short).

| Scenario | Accepted | 503 | 502 | No answer | Lost | Codes delivered twice | Money mismatches | Unsettled | Flowed again (s) | Note |
|---|---|---|---|---|---|---|---|---|---|---|
`;

/** Appends a scenario's line to the report file named by TOPOLOGY_REPORT (a markdown table), when set. */
export async function report(result: ScenarioResult): Promise<void> {
  const line =
    `| ${result.scenario} | ${result.accepted} | ${result.answered503} | ${result.answered502} | ${result.noAnswer} | ${result.lost} | ` +
    `${result.codesDeliveredTwice} | ${result.moneyMismatches} | ${result.unsettled} | ${result.secondsUntilOrdersFlowed.toFixed(1)} | ${result.note} |`;
  process.stdout.write(`topology: ${line}\n`);
  const file = process.env.TOPOLOGY_REPORT;
  if (file) {
    const path = resolve(ROOT, file);
    await mkdir(dirname(path), { recursive: true });
    const started = await access(path).then(() => true, () => false);
    if (!started) await writeFile(path, REPORT_HEADER);
    await appendFile(path, `${line}\n`);
  }
}
