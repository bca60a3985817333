import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { Sql } from '../../src/db/client.js';
import { closedLoop, CONNECTIONS, percentile, runHttp, type Measured } from './load.js';
import { startProbe } from './probes.js';
import type { Answer } from './scenarios.js';
import { freePort, sleep, spawnTs, waitForHttp } from '../helpers/processes.js';

/** What this machine can do at best, measured without the product's code in the way. */

/** A bare Hono app (own process, like the service) answering a tiny JSON body. */
export async function bareHonoCeiling(seconds: number, warmup: number): Promise<Measured> {
  const port = await freePort();
  const server = spawnTs('test/bench/bare-hono.ts', { PORT: String(port) });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/`, server);
    const next = () => ({ method: 'GET' as const, path: '/' });
    await runHttp({ url, seconds: warmup, next });
    const probe = await startProbe({ server: server.process.pid, 'bench (load generator)': process.pid });
    const { total: _total, ...figures } = await runHttp({ url, seconds, next });
    return { ...figures, note: await probe.stop() };
  } finally {
    await server.stop();
  }
}

/**
 * The fair ceiling of a read (a tiny body is no ceiling for a 13 KB catalog page): a bare node:http server in its
 * own process sending, for each path of `bodies`, the same bytes the service answered (header lines and body),
 * requested in the same mix.
 */
export async function sameBytesCeiling(bodies: Record<string, Answer>, seconds: number, warmup: number): Promise<Measured> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'bench-bodies-'));
  const file = join(dir, 'bodies.json');
  await writeFile(file, JSON.stringify(bodies));
  const server = spawnTs('test/bench/same-bytes.ts', { PORT: String(port), BODIES_FILE: file });
  try {
    const url = `http://127.0.0.1:${port}`;
    const paths = Object.keys(bodies);
    await waitForHttp(`${url}${paths[0]}`, server);
    const next = () => ({ method: 'GET' as const, path: paths[Math.floor(Math.random() * paths.length)]! });
    await runHttp({ url, seconds: warmup, next });
    const probe = await startProbe({ server: server.process.pid, 'bench (load generator)': process.pid });
    const { total: _total, ...figures } = await runHttp({ url, seconds, next });
    const bytes = Math.round(paths.reduce((sum, path) => sum + Buffer.byteLength(bodies[path]!.body), 0) / paths.length);
    return { ...figures, note: `${await probe.stop()}, ${paths.length} paths, ${bytes} bytes per body on average` };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export type RawTxTarget = { accountIds: number[]; cardService: { id: number; cardId: number; price: string } };

/** Marks the ceiling's rows so they can be removed before the service starts. */
export const RAW_TX_UTR_PREFIX = 'CEIL';

/**
 * The writes of a one-line card order as a plain multi-statement transaction (insert order and
 * line, debit the balance, ledger row), from CONNECTIONS connections in a closed loop.
 */
export async function rawTxCeiling(databaseUrl: string, target: RawTxTarget, seconds: number, warmup: number): Promise<Measured> {
  const sql = postgres(databaseUrl, { max: CONNECTIONS, onnotice: () => {}, connection: { TimeZone: 'UTC' } });
  const { id: serviceId, cardId, price } = target.cardService;
  const placeOrder = async (worker: number, call: number) => {
    const accountId = target.accountIds[(worker + call) % target.accountIds.length]!;
    const utr = `${RAW_TX_UTR_PREFIX}${randomBytes(10).toString('hex')}`;
    await sql.begin(async (tx) => {
      const [order] = await tx`
        insert into orders (utr, account_id, kind, status, total, currency, currency_symbol)
        values (${utr}, ${accountId}, 'card', 0, ${price}, 'USD', '$') returning id`;
      await tx`
        insert into order_lines (order_id, card_service_id, card_id, quantity, base_price, discount, unit_price, line_total, codes_owed)
        values (${order!.id}, ${serviceId}, ${cardId}, 1, ${price}, 0, ${price}, ${price}, 1)`;
      const [account] = await tx`
        update accounts set balance = balance - ${price}::numeric, updated_at = now()
        where id = ${accountId} and balance >= ${price}::numeric returning balance`;
      if (!account) throw new Error('insufficient balance');
      await tx`
        insert into balance_ledger (account_id, amount, balance_after, kind, currency, order_id)
        values (${accountId}, ${`-${price}`}::numeric, ${account.balance}, 'order_debit', 'USD', ${order!.id})`;
    });
  };
  try {
    await closedLoop(CONNECTIONS, { seconds: warmup }, placeOrder);
    const probe = await startProbe({ bench: process.pid }, sql);
    const run = await closedLoop(CONNECTIONS, { seconds }, placeOrder);
    if (run.firstError) process.stderr.write(`raw-tx ceiling: ${run.failures} failures, first: ${String(run.firstError)}\n`);
    return { ...figures(run.latencies, run.failures, run.elapsedMs), note: await probe.stop() };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Removes the ceiling's orders and puts the balances back to what their ledgers say. */
export async function removeRawTxRows(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.begin(async (tx) => {
      await tx`create temp table gone on commit drop as select id, account_id from orders where utr like ${`${RAW_TX_UTR_PREFIX}%`}`;
      await tx`delete from balance_ledger where order_id in (select id from gone)`;
      await tx`delete from order_lines where order_id in (select id from gone)`;
      await tx`delete from orders where id in (select id from gone)`;
      await tx`
        update accounts a set balance = l.total
        from (select account_id, sum(amount) total from balance_ledger
              where account_id in (select distinct account_id from gone) group by account_id) l
        where l.account_id = a.id`;
    });
    await sql`vacuum analyze orders, order_lines, balance_ledger, accounts`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export type QueueCeiling = {
  redisUrl: string;
  prefix: string;
  concurrency: number;
  /** As many jobs as the end-to-end scenarios place orders. */
  jobs: number;
  /** The job's work; none for the no-op ceiling. */
  job?: (n: number) => Promise<void>;
  /** The database the job writes to, for the CPU notes. */
  sql?: Sql;
};

/**
 * BullMQ add-then-process: CONNECTIONS producers add `jobs` jobs (unique jobId, as orders do)
 * while one worker of the service's concurrency processes them. rps = jobs completed
 * per second from the first add to the last completion; latencies are add → completed.
 */
export async function bullmqCeiling(options: QueueCeiling): Promise<Measured> {
  const name = `ceiling-${randomBytes(4).toString('hex')}`;
  const producerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  const workerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection: producerConnection, prefix: options.prefix });
  const latencies: number[] = [];
  let failed = 0;
  let lastDone = 0;
  const worker = new Worker(name, async (job) => options.job?.(job.data.n as number), {
    connection: workerConnection,
    prefix: options.prefix,
    concurrency: options.concurrency,
  });
  worker.on('completed', (job) => {
    lastDone = Date.now();
    latencies.push(lastDone - job.timestamp);
  });
  worker.on('failed', () => void failed++);
  try {
    await worker.waitUntilReady();
    const probe = await startProbe({ bench: process.pid }, options.sql);
    const started = Date.now();
    let added = 0;
    const adding = await closedLoop(CONNECTIONS, { calls: options.jobs }, async (_, n) => {
      await queue.add('job', { n }, { jobId: `j${n}`, removeOnComplete: true, removeOnFail: true });
      added++;
    });
    const deadline = Date.now() + 120_000;
    while (latencies.length + failed < added && Date.now() < deadline) await sleep(50);
    const elapsed = Math.max(1, lastDone - started);
    const note = `${await probe.stop()}, added ${Math.round(added / (adding.elapsedMs / 1000))} jobs/s`;
    return { ...figures(latencies, failed + adding.failures + (added - latencies.length - failed), elapsed), note };
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    producerConnection.disconnect();
    workerConnection.disconnect();
  }
}

function figures(latencies: number[], errors: number, elapsedMs: number): Measured {
  return {
    rps: latencies.length / (elapsedMs / 1000),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    errors,
  };
}
