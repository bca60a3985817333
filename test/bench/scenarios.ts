import type autocannon from 'autocannon';
import type { Sql } from '../../src/db/client.js';
import type { Catalog } from './data.js';
import { CONNECTIONS, runHttp, type Figures, type Measured } from './load.js';
import { startProbe, type Pids } from './probes.js';
import { sleep } from '../helpers/processes.js';

/** The HTTP scenarios against the running service. */

export type Target = {
  baseUrl: string;
  seconds: number;
  warmup: number;
  /** Bench connection to the service's database, for polling and counters. */
  sql: Sql;
  /** Processes whose CPU the notes report (service, second worker). */
  pids: () => Pids;
  /** Throws when a process under test died: its figures would be meaningless. */
  ensureRunning: () => void;
};

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

/** Round-robin over tokens, so consecutive requests come from different accounts. */
function rotation(tokens: string[]): () => string {
  let i = 0;
  return () => tokens[i++ % tokens.length]!;
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** One-line, one-unit card orders (the writes the raw-transaction ceiling does). */
export function cardOrders(catalog: Catalog, tokens: string[]): () => autocannon.Request {
  const token = rotation(tokens);
  return () => ({
    method: 'POST',
    path: '/api/card/make-order',
    headers: { ...auth(token()), 'content-type': 'application/json' },
    body: JSON.stringify({ service_ids: [pick(catalog.cardServices).id], quantities: [1] }),
  });
}

/** Top-up orders with their order-form fields, as JSON. */
export function topUpOrders(catalog: Catalog, tokens: string[]): () => autocannon.Request {
  const token = rotation(tokens);
  return () => {
    const topUp = pick(catalog.topUps);
    return {
      method: 'POST',
      path: '/api/top-up/make-order',
      headers: { ...auth(token()), 'content-type': 'application/json' },
      body: JSON.stringify({
        topUpId: topUp.id,
        serviceId: pick(topUp.serviceIds),
        User_Id: String(100000 + Math.floor(Math.random() * 900000)),
        Zone_Name: pick(['Asia', 'Europe', 'America']),
      }),
    };
  };
}

/** The paths each read scenario requests, in equal measure. */
export function readPaths(catalog: Catalog) {
  return {
    'top-up-list': ['/api/top-up/list'],
    'top-up-details': catalog.topUps.map((topUp) => `/api/top-up/details?slug=${topUp.slug}`),
    'card-services': catalog.cards.map((card) => `/api/card/services?card_id=${card}`),
    'card-orders': ['/api/get-card/orders'],
  };
}

export type ReadName = keyof ReturnType<typeof readPaths>;

export function reads(catalog: Catalog, tokens: string[]): Record<ReadName, () => autocannon.Request> {
  const token = rotation(tokens);
  const paths = readPaths(catalog);
  const get = (name: ReadName) => () => ({ method: 'GET' as const, path: pick(paths[name]), headers: auth(token()) });
  return { 'top-up-list': get('top-up-list'), 'top-up-details': get('top-up-details'), 'card-services': get('card-services'), 'card-orders': get('card-orders') };
}

/** The bytes the service answers to each path of a read scenario, as one account sees them. */
/** An answer as the read ceiling sends it again: its body and its header lines but those node writes itself. */
export type Answer = { body: string; headers: Record<string, string> };

/** Headers node's http server writes on every answer by itself (and the length, which it is given). */
const WRITTEN_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

export async function readBodies(baseUrl: string, paths: string[], token: string): Promise<Record<string, Answer>> {
  const answers: Record<string, Answer> = {};
  for (const path of paths) {
    const response = await fetch(`${baseUrl}${path}`, { headers: auth(token) });
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    const headers = Object.fromEntries([...response.headers].filter(([name]) => !WRITTEN_BY_NODE.has(name)));
    answers[path] = { body: await response.text(), headers };
  }
  return answers;
}

/** A warm-up run (not recorded), then the measured one. */
export async function measureHttp(target: Target, next: () => autocannon.Request): Promise<Measured> {
  await runHttp({ url: target.baseUrl, seconds: target.warmup, next });
  const probe = await startProbe({ ...target.pids(), 'bench (load generator)': process.pid }, target.sql);
  const { total, ...figures } = await runHttp({ url: target.baseUrl, seconds: target.seconds, next });
  target.ensureRunning();
  return { ...figures, note: await probe.stop(total) };
}

/**
 * Two loads compared fairly: both warmed up, then measured in turns A, B, B, A (half the time each), so that whatever
 * drifts in the machine during the run (a checkpoint, autovacuum, tables growing) weighs on both alike. Each gets its
 * mean rate, the higher p50 and p99 of its two turns, and its errors.
 */
export async function measureInTurns(target: Target, first: () => autocannon.Request, second: () => autocannon.Request): Promise<[Measured, Measured]> {
  for (const next of [first, second]) await runHttp({ url: target.baseUrl, seconds: target.warmup, next });
  const turn = (next: () => autocannon.Request) => runHttp({ url: target.baseUrl, seconds: target.seconds / 2, next });
  const [a1, b1, b2, a2] = [await turn(first), await turn(second), await turn(second), await turn(first)];
  target.ensureRunning();
  const note = 'measured in turns A, B, B, A with the row it is compared with';
  return [bothTurns(a1!, a2!, note), bothTurns(b1!, b2!, note)];
}

/** One row of a load's two turns: rps the mean, p50 and p99 the higher, errors summed. */
export function bothTurns(x: Figures, y: Figures, note: string): Measured {
  return {
    rps: (x.rps + y.rps) / 2,
    p50_ms: Math.max(x.p50_ms, y.p50_ms),
    p99_ms: Math.max(x.p99_ms, y.p99_ms),
    errors: x.errors + y.errors,
    note,
  };
}

/**
 * The same load spread over several API processes (one autocannon per process, the 64 connections shared out,
 * run at once): rps is their sum, p50/p99 the highest of theirs.
 */
export async function measureHttpAcross(target: Target, baseUrls: string[], next: () => autocannon.Request): Promise<Measured> {
  const connections = Math.floor(CONNECTIONS / baseUrls.length);
  const across = (seconds: number) => Promise.all(baseUrls.map((url) => runHttp({ url, seconds, next, connections })));
  await across(target.warmup);
  const probe = await startProbe({ ...target.pids(), 'bench (load generator)': process.pid }, target.sql);
  const runs = await across(target.seconds);
  target.ensureRunning();
  return {
    rps: runs.reduce((sum, r) => sum + r.rps, 0),
    p50_ms: Math.max(...runs.map((r) => r.p50_ms)),
    p99_ms: Math.max(...runs.map((r) => r.p99_ms)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    note: await probe.stop(runs.reduce((sum, r) => sum + r.total, 0)),
  };
}

/**
 * Waits until the workers have moved every card order (with an id above `afterId`) out of
 * `initiate`; returns how many are still there at the deadline. Also keeps one scenario's
 * backlog from running into the next measurement.
 */
export async function waitForCardOrders(target: Target, afterId = '0', timeoutMs = 180_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    target.ensureRunning();
    const [row] = await target.sql`select count(*)::int as pending from orders where id > ${afterId} and kind = 'card' and status = 0`;
    if (row!.pending === 0 || Date.now() > deadline) return row!.pending as number;
    await sleep(100);
  }
}

/**
 * End to end: `amount` card orders placed at full concurrency; rps = orders completed per second
 * from the first request to the last `completed_at`; p50/p99 = completed_at − created_at;
 * errors = failed placements + orders that did not complete (stock_short, refund, or still pending).
 */
export async function endToEnd(target: Target, next: () => autocannon.Request, amount: number): Promise<Measured> {
  const { sql } = target;
  const probe = await startProbe(target.pids(), sql);
  const [before] = await sql`select coalesce(max(id), 0)::bigint as id, clock_timestamp()::text as started from orders`;
  const placed = await runHttp({ url: target.baseUrl, seconds: 600, amount, next });
  target.ensureRunning();
  const pending = await waitForCardOrders(target, before!.id as string, 300_000);
  const [row] = await sql`
    select count(*) filter (where status = 1)::int as completed,
           count(*) filter (where status <> 1)::int as other,
           extract(epoch from max(completed_at) - ${before!.started}::timestamptz) as seconds,
           percentile_cont(0.5) within group (order by extract(epoch from completed_at - created_at) * 1000)
             filter (where status = 1) as p50,
           percentile_cont(0.99) within group (order by extract(epoch from completed_at - created_at) * 1000)
             filter (where status = 1) as p99
    from orders where id > ${before!.id} and kind = 'card'`;
  if (pending > 0) process.stderr.write(`e2e: ${pending} orders still in initiate after the wait\n`);
  return {
    rps: row!.completed / Number(row!.seconds ?? 1),
    p50_ms: Number(row!.p50 ?? 0),
    p99_ms: Number(row!.p99 ?? 0),
    errors: placed.errors + row!.other,
    // Whether fulfilment keeps up: orders completed per second against orders placed per second.
    note: `${await probe.stop(row!.completed)}, placement ${Math.round(placed.rps)} rps, completed ${(row!.completed / Number(row!.seconds ?? 1) / placed.rps).toFixed(2)}× the placement rate`,
  };
}

/**
 * Fulfilment alone: the card orders waiting in `initiate` (a backlog in the queue) drained by workers that `start`
 * brings up while nothing else runs. rps = orders completed per second from the first completion to the last (the
 * workers' start-up left out); no latencies (an order's wait is its place in the backlog); errors = orders that did
 * not reach `completed`. The note's db xact/req is PostgreSQL transactions per order completed.
 */
export async function drainBacklog(target: Target, start: () => Promise<void>): Promise<Measured> {
  const { sql } = target;
  const [backlog] = await sql`select (coalesce(min(id), 1) - 1)::bigint as after, count(*)::int as orders from orders where kind = 'card' and status = 0`;
  await start();
  const probe = await startProbe(target.pids(), sql);
  const pending = await waitForCardOrders(target, backlog!.after as string, 300_000);
  const [row] = await sql`
    select count(*) filter (where status = 1)::int as completed,
           count(*) filter (where status <> 1)::int as other,
           extract(epoch from max(completed_at) - min(completed_at)) as seconds
    from orders where id > ${backlog!.after} and kind = 'card'`;
  if (pending > 0) process.stderr.write(`drain: ${pending} orders still in initiate after the wait\n`);
  return {
    rps: row!.completed / Math.max(0.001, Number(row!.seconds ?? 1)),
    p50_ms: Number.NaN,
    p99_ms: Number.NaN,
    errors: row!.other,
    note: `${await probe.stop(row!.completed)}, backlog ${backlog!.orders} orders`,
  };
}
