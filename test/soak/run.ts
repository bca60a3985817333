/**
 * `npm run soak -- --orders N`: N accepted card, top-up and campaign orders from many accounts against the service as
 * it runs in production (an API process and worker processes), top-ups routed over three local suppliers, one webhook
 * endpoint per account, while restocks, refunds and a campaign end happen and faults are injected on a schedule
 * (workers and the API killed, Redis restarted empty, PostgreSQL backends terminated, a supplier failing for a minute, a
 * webhook endpoint down for five). Each process's memory is sampled every 10 s. When the store has settled, DESIGN §2
 * is checked over the whole database, every event is checked delivered, and the result is written to
 * reports/reliability.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { connectDatabase } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { createAccount } from '../../src/modules/accounts/service.js';
import { syncCampaigns } from '../../src/modules/campaigns/service.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { checkInvariants, violations } from '../helpers/invariants.js';
import { ROOT, sleep, TEST_METRICS_TOKEN } from '../helpers/processes.js';
import { ownRedis } from '../helpers/redis-server.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { startSoakReceiver } from './receiver.js';
import { memorySampler } from './memory.js';

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '32' },
    accounts: { type: 'string', default: '40' },
    report: { type: 'string', default: 'reports/reliability.md' },
    /** How long a webhook endpoint is down, and a supplier failing, during the run (seconds). */
    'endpoint-down': { type: 'string', default: '300' },
    'supplier-failing': { type: 'string', default: '60' },
  },
  strict: true,
});
const ORDERS = Number(args.orders);
const CONCURRENCY = Number(args.concurrency);
const ACCOUNTS = Number(args.accounts);
const ENDPOINT_DOWN_S = Number(args['endpoint-down']);
const SUPPLIER_FAILING_S = Number(args['supplier-failing']);
if (![ORDERS, CONCURRENCY, ACCOUNTS, ENDPOINT_DOWN_S, SUPPLIER_FAILING_S].every(Number.isInteger) || ORDERS < 1) {
  process.stderr.write('usage: npm run soak -- --orders <n> [--concurrency <n>] [--accounts <n>] [--report <file>] [--endpoint-down <s>] [--supplier-failing <s>]\n');
  process.exit(2);
}

const log = (line: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

// ── a database and a Redis of its own ──
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `topup_soak_${Date.now().toString(36)}`;
const maintenance = new URL(server);
maintenance.pathname = '/postgres';
const admin = postgres(maintenance.toString(), { max: 1, onnotice: () => {} });
await admin.unsafe(`create database "${name}"`);
const databaseUrl = new URL(server);
databaseUrl.pathname = `/${name}`;
await migrateDatabase(databaseUrl.toString());
const redis = await ownRedis();
const db = connectDatabase(databaseUrl.toString(), { max: 4, applicationName: 'topup-soak' });

// ── three top-up suppliers (the store's http protocol). The first mostly delivers, sometimes delivers and answers 503
// (an unknown outcome, settled by a status query) and sometimes refuses (the next route takes the order); it fails
// every order for a minute during the run. The other two deliver. ──
const providerAnswers = { delivered: 0, unavailable: 0, refused: 0, failing: 0 };
const PROVIDER_SECRET = 'soak-provider-secret-0123';
let firstFailingUntil = 0;
const suppliers: HttpSupplier[] = [
  await startHttpSupplier({
    secret: PROVIDER_SECRET,
    balance: '100000000.00',
    modeFor: () => {
      if (Date.now() < firstFailingUntil) {
        providerAnswers.failing += 1;
        return { mode: 'error500' };
      }
      const roll = Math.random();
      const answer = roll < 0.85 ? 'delivered' : roll < 0.95 ? 'unavailable' : 'refused';
      providerAnswers[answer] += 1;
      return { mode: answer === 'delivered' ? 'deliver' : answer === 'unavailable' ? 'error500AfterDelivering' : 'refuse' };
    },
  }),
  await startHttpSupplier({ secret: PROVIDER_SECRET, balance: '100000000.00' }),
  await startHttpSupplier({ secret: PROVIDER_SECRET, balance: '100000000.00' }),
];
const receiver = await startSoakReceiver();

const cluster: Cluster = await startCluster({
  databaseUrl: databaseUrl.toString(),
  redisUrl: redis.url,
  workers: 2,
  env: { JOB_LOCK_SECONDS: '3', WEBHOOK_ALLOW_PRIVATE: 'true', METRICS_TOKEN: TEST_METRICS_TOKEN },
});

// ── the catalog: three cards of three services, two top-ups, one campaign over cards and a top-up ──
const cards: Array<Awaited<ReturnType<typeof createCard>>> = [];
for (let i = 0; i < 3; i++) cards.push(await createCard(db.db, { services: [{ price: '1.00' }, { price: '5.00' }, { price: '10.00' }] }));
const cardServices = cards.flatMap((c) => c.services.map((s) => s.id));
const topUps: Array<Awaited<ReturnType<typeof createTopUp>>> = [];
for (let i = 0; i < 2; i++) {
  topUps.push(
    await createTopUp(db.db, {
      services: [{ price: '2.00' }, { price: '7.50' }],
      orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
    }),
  );
}
const campaign = await createCampaign(db.db, {
  cardServices: [cardServices[0]!, cardServices[4]!].map((serviceId) => ({ serviceId, price: '0.50', maxSell: 300 })),
  topUpServices: [{ serviceId: topUps[0]!.services[0]!.id, price: '1.00', maxSell: 200 }],
});
await syncCampaigns(db.db);

const adminHeaders = { Authorization: `Bearer ${cluster.adminToken}`, 'Content-Type': 'text/plain' };
const adminJson = async (method: string, path: string, body: unknown) => {
  const response = await fetch(`${cluster.baseUrl}${path}`, { method, headers: { ...adminHeaders, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { message: any }).message;
};
// Each top-up service routed over the three suppliers, each service starting with another one.
const providerIds: number[] = [];
for (const [i, supplier] of suppliers.entries()) {
  const provider = await adminJson('POST', '/admin/providers', { name: `Soak supplier ${i + 1}`, kind: 'http', base_url: supplier.url, credentials: { secret: PROVIDER_SECRET } });
  providerIds.push(provider.id);
}
const topUpServices = topUps.flatMap((t) => t.services.map((s) => s.id));
for (const [i, serviceId] of topUpServices.entries()) {
  const order = [0, 1, 2].map((n) => providerIds[(i + n) % 3]!);
  // Half the services start at the supplier that fails for a minute.
  if (i % 2 === 0) order.unshift(...order.splice(order.indexOf(providerIds[0]!), 1));
  await adminJson('PUT', `/admin/top-up-services/${serviceId}/routes`, order.map((provider_id) => ({ provider_id, product_code: `soak-${serviceId}` })));
}
let codeSerial = 0;
/** Imports `count` new codes of a service through the admin API, in imports of at most 5,000 codes. */
async function restock(serviceId: number, count: number): Promise<void> {
  for (let left = count; left > 0; left -= 5000) {
    const codes = Array.from({ length: Math.min(left, 5000) }, () => `SOAK-${serviceId}-${codeSerial++}-${randomBytes(4).toString('hex')}`);
    await fetch(`${cluster.baseUrl}/admin/card-services/${serviceId}/codes`, { method: 'POST', headers: adminHeaders, body: codes.join('\n') })
      .then((response) => response.body?.cancel())
      .catch(() => {});
  }
}
for (const serviceId of cardServices) await restock(serviceId, 400);

const tokens: string[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const keys = await createAccount(db.db, { firstname: 'Soak', lastname: `Buyer ${i}`, currency: 'USD', currencySymbol: '$', balance: '50000.00' });
  const response = await fetch(`${cluster.baseUrl}/api/generate/authorization-token`, {
    method: 'POST',
    headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
  });
  const token = ((await response.json()) as { bearer_token: string }).bearer_token;
  tokens.push(token);
  // One webhook endpoint per account, on the run's receiver.
  const endpoint = await fetch(`${cluster.baseUrl}/api/webhooks`, {
    method: 'POST',
    headers: { Authorization: token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: receiver.urlFor(i) }),
  });
  if (endpoint.status !== 200) throw new Error(`POST /api/webhooks: ${endpoint.status} ${await endpoint.text()}`);
}

// ── the load ──
const accepted: string[] = [];
const statuses: Record<string, number> = {};
let transportErrors = 0;
/** Requests sent twice with one Idempotency-Key: the repeat must name the same order, or be refused, never a second order. */
const replays = { sent: 0, sameUtr: 0, otherUtr: 0, refused: 0 };
/** Answers other than 200, by the fault in effect when they were given. */
const refusals = new Map<string, Record<string, number>>();
let phase = 'before any fault';
let sent = 0;

async function placeOne(): Promise<void> {
  const token = pick(tokens);
  const card = Math.random() < 0.7;
  const body = card
    ? { service_ids: [pick(cardServices)], quantities: [1 + Math.floor(Math.random() * 3)] }
    : (() => {
        const topUp = pick(topUps);
        return { topUpId: topUp.id, serviceId: pick(topUp.services).id, player_id: `player-${Math.floor(Math.random() * 1e6)}` };
      })();
  const key = Math.random() < 0.05 ? randomBytes(8).toString('hex') : null;
  const send = () =>
    fetch(`${cluster.baseUrl}/api/${card ? 'card' : 'top-up'}/make-order`, {
      method: 'POST',
      headers: { Authorization: token, 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  const utrOf = async (response: Response) => {
    const text = await response.text();
    const message = (JSON.parse(text) as { message: { utr?: string } | string }).message;
    return typeof message === 'string' ? /order number is (\w+)/.exec(message)?.[1] : message.utr;
  };
  try {
    const response = await send();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    if (response.status !== 200) {
      const seen = refusals.get(phase) ?? {};
      seen[response.status] = (seen[response.status] ?? 0) + 1;
      refusals.set(phase, seen);
      await response.body?.cancel();
      return;
    }
    const utr = await utrOf(response);
    if (utr) accepted.push(utr);
    if (key && utr) {
      replays.sent += 1;
      const again = await send();
      if (again.status !== 200) {
        replays.refused += 1;
        await again.body?.cancel();
      } else if ((await utrOf(again)) === utr) replays.sameUtr += 1;
      else replays.otherUtr += 1;
    }
  } catch {
    transportErrors += 1;
    // The API is down (killed, restarting): a client waits a moment before its next request.
    await sleep(100);
  }
}

// ── what happens meanwhile ──
const faults: Array<{ at: number; what: string }> = [];
const activity = { restocks: 0, refunds: 0, campaignEnded: false };
/** Processes the run killed on purpose; any other that ended is a crash. */
const killed = new Set<number>();
const kill = (run: { process: { pid?: number; kill: (signal: NodeJS.Signals) => boolean } }) => {
  killed.add(run.process.pid!);
  run.process.kill('SIGKILL');
};
const fault = (what: string) => {
  faults.push({ at: accepted.length, what });
  phase = `after "${what}"`;
  log(`fault at accepted order ${accepted.length}: ${what}`);
};
const done = () => accepted.length >= ORDERS;

async function injectFaults(): Promise<void> {
  const at = (share: number) => accepted.length >= ORDERS * share;
  const steps: Array<[number, () => Promise<void>]> = [
    [0.08, async () => {
      fault(`supplier 1 fails every order for ${SUPPLIER_FAILING_S} s (HTTP 500): its routes go on to the next supplier`);
      firstFailingUntil = Date.now() + SUPPLIER_FAILING_S * 1000;
    }],
    [0.12, async () => {
      fault(`the webhook endpoint of account 1 down for ${ENDPOINT_DOWN_S} s (HTTP 503)`);
      receiver.downFor(0, ENDPOINT_DOWN_S * 1000);
    }],
    [0.15, async () => {
      fault('SIGKILL of worker process 1 mid-batch, a new worker started');
      kill(cluster.workers[0]!);
      await cluster.startWorker();
    }],
    [0.3, async () => {
      fault('Redis stopped for 3 s, then started again empty');
      await redis.stop();
      await sleep(3000);
      await redis.start();
    }],
    [0.45, async () => {
      fault('every PostgreSQL backend of the service terminated, 4 times 300 ms apart');
      for (let i = 0; i < 4; i++) {
        await db.sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and application_name = 'topup-store'`;
        await sleep(300);
      }
    }],
    [0.5, async () => {
      fault('the running campaign ended (status 0): sync restores its services');
      await db.sql`update campaigns set status = 0 where id = ${campaign.id}`;
      activity.campaignEnded = true;
    }],
    [0.6, async () => {
      fault('SIGKILL of worker process 2, a new worker started');
      kill(cluster.workers[1]!);
      await cluster.startWorker();
    }],
    [0.75, async () => {
      fault('SIGKILL of the API process mid-request, started again');
      kill(cluster.api);
      await cluster.api.exit;
      await cluster.restartApi();
    }],
    [0.9, async () => {
      fault('every PostgreSQL backend terminated again, and Redis emptied (FLUSHALL)');
      await db.sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and application_name = 'topup-store'`;
      const { Redis } = await import('ioredis');
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
    }],
  ];
  for (const [share, step] of steps) {
    while (!at(share) && !done()) await sleep(50);
    if (done()) return;
    await step();
  }
}

async function operate(stop: () => boolean): Promise<void> {
  while (!stop()) {
    await sleep(700);
    // A restock of a random service, and a refund of a random order that is not completed.
    await restock(pick(cardServices), 20 + Math.floor(Math.random() * 60));
    activity.restocks += 1;
    const [order] = await db.sql<{ utr: string }[]>`
      select utr from orders where status in (0, 3) order by random() limit 1`.catch(() => []);
    if (order) {
      const response = await fetch(`${cluster.baseUrl}/admin/orders/${order.utr}/refund`, {
        method: 'POST',
        headers: { ...adminHeaders, 'Content-Type': 'application/json' },
        body: JSON.stringify({ reason: 'soak: refund while running' }),
      }).catch(() => null);
      if (response?.status === 200) activity.refunds += 1;
    }
  }
}

const started = Date.now();
log(`placing orders from ${ACCOUNTS} accounts, ${CONCURRENCY} at a time, until ${ORDERS} are accepted`);
let loadDone = false;
const progress = setInterval(() => log(`${sent} sent, ${accepted.length} accepted`), 10_000);
const sampled = (run: { process: { pid?: number | undefined } } | undefined, metricsUrl: string | undefined) =>
  run && metricsUrl ? { pid: run.process.pid, metricsUrl } : undefined;
// Worker processes by the order they were started (3 and 4 replace the killed 1 and 2); the API keeps its name when
// started again, each of its processes judged apart.
const memory = memorySampler(
  () => ({
    API: sampled(cluster.api, cluster.baseUrl),
    ...Object.fromEntries(cluster.workers.map((worker, i) => [`worker ${i + 1}`, sampled(worker, worker.metricsUrl)])),
  }),
  10_000,
);
const clients = Array.from({ length: CONCURRENCY }, async () => {
  while (!done()) {
    sent += 1;
    await placeOne();
  }
});
const background = Promise.all([injectFaults(), operate(() => loadDone)]);
await Promise.all(clients);
loadDone = true;
await background;
clearInterval(progress);
const loadSeconds = (Date.now() - started) / 1000;
const memoryUse = await memory.stop();

// ── settle: enough codes for every waiting order, then wait until nothing moves by itself ──
log('load done; restocking what every service owes until no order waits for codes, and letting the store settle');
/** Orders still to move on by themselves (DESIGN §2: none once the store has settled). */
const pendingOrders = async () =>
  (
    await db.sql<{ pending: number }[]>`
      select (select count(*)::int from orders where status = 0 and awaiting_operator_since is null)
           + (select count(*)::int from order_lines l join orders o on o.id = l.order_id
              where o.status = 3 and l.codes_owed > 0
                and exists (select 1 from card_codes c where c.card_service_id = l.card_service_id and c.order_line_id is null)) as pending`
  )[0]!.pending;
const settleStarted = Date.now();
let pending = -1;
let restockRounds = 0;
while (Date.now() - settleStarted < 600_000) {
  pending = await pendingOrders();
  if (pending > 0) {
    await sleep(1000);
    continue;
  }
  const owed = await db.sql<{ service: number; owed: number }[]>`
    select l.card_service_id as service, sum(l.codes_owed)::int as owed from order_lines l join orders o on o.id = l.order_id
    where o.status = 3 and l.codes_owed > 0 group by 1`;
  if (owed.length === 0 || restockRounds === 5) break;
  restockRounds += 1;
  for (const { service, owed: count } of owed) await restock(service, count);
  await sleep(1000);
}
// ── webhooks: every event delivered at least once. The endpoint that was down gets what it missed from its retries,
// or, for the ones whose next retry is hours away, from an operator's resend once it is back. ──
while (receiver.isDown(0)) await sleep(1000);
const waiting = await db.sql<{ id: string }[]>`select id::text from webhook_deliveries where status <> 'delivered' and endpoint_id is not null`;
for (const { id } of waiting) {
  await fetch(`${cluster.baseUrl}/admin/webhook-deliveries/${id}/retry`, { method: 'POST', headers: adminHeaders }).then((r) => r.body?.cancel());
}
const webhooksStarted = Date.now();
const undelivered = async () =>
  (await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where status <> 'delivered' and endpoint_id is not null`)[0]!.n;
while ((await undelivered()) > 0 && Date.now() - webhooksStarted < 300_000) await sleep(1000);
const [hooks] = await db.sql<{ events: number; deliveries: number; delivered: number; attempts: number }[]>`
  select (select count(*)::int from webhook_events where account_id is not null) as events,
         count(*)::int as deliveries, count(*) filter (where status = 'delivered')::int as delivered,
         (select count(*)::int from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id is not null) as attempts
  from webhook_deliveries where endpoint_id is not null`;
const received = receiver.stats();
const webhooksHeld = hooks!.delivered === hooks!.deliveries && hooks!.deliveries >= hooks!.events && received.events >= hooks!.deliveries;
// What the processes keep (the heap after a major collection) must not grow; resident memory is reported beside it.
const memoryHeld = memoryUse.every((m) => m.judged && m.heap.growth <= 0.1);

const crashed = cluster.processes().filter((p) => (p.process.exitCode !== null || p.process.signalCode !== null) && !killed.has(p.process.pid!)).length;
const report = await checkInvariants(db.sql, accepted);
const counts = violations(report);
const [money] = await db.sql<{ debited: string; refunded: string; balances: string; credited: string }[]>`
  select (select coalesce(sum(-amount), 0) from balance_ledger where kind = 'order_debit')::text as debited,
         (select coalesce(sum(amount), 0) from balance_ledger where kind = 'order_refund')::text as refunded,
         (select sum(balance) from accounts)::text as balances,
         (select coalesce(sum(amount), 0) from balance_ledger where kind in ('deposit', 'adjustment'))::text as credited`;
const distinct = new Set(accepted).size;
const [{ placed } = { placed: 0 }] = await db.sql<{ placed: number }[]>`select count(*)::int as placed from orders`;
const healthy = Object.values(counts).every((n) => n === 0) && pending === 0 && replays.otherUtr === 0 && crashed === 0 && webhooksHeld && memoryHeld;

// ── the report ──
const lines = [
  '# Reliability report',
  '',
  `Run of ${new Date().toISOString().slice(0, 10)} with \`npm run soak -- --orders ${ORDERS}\` on the development machine`,
  '(2 cores, Node 20, PostgreSQL 15, Redis 7): one API process and two worker processes, as in production, on a',
  'database and a Redis of the run\'s own; top-ups routed over three suppliers (the store\'s `http` protocol, each',
  'service with its own order of them): the first delivers 85 %, delivers and answers 503 10 % (settled by a status',
  'query) and refuses 5 % (the next route takes the order), the other two deliver. One webhook endpoint per account.',
  '',
  '## Scenario',
  '',
  `- Orders from ${ACCOUNTS} accounts, ${CONCURRENCY} at a time, until ${ORDERS} were accepted (${sent} requests): 70 % card orders (1–3`,
  '  codes of one of 9 card services), 30 % top-up orders (2 top-ups, 2 services each); 5 % carry an `Idempotency-Key`',
  '  and are sent twice.',
  '- A campaign over two card services (cap 300 units each) and one top-up service (cap 200).',
  `- Meanwhile, about every 0.7 s: a restock of 20–80 codes of a random service (${activity.restocks} in all) and an operator refund`,
  `  of a random order not completed (${activity.refunds} refunds answered 200).`,
  '',
  '## Faults injected',
  '',
  '| at accepted order | fault |',
  '|---:|---|',
  ...faults.map((f) => `| ${f.at} | ${f.what} |`),
  '',
  '## Result',
  '',
  '| measure | value |',
  '|---|---:|',
  `| order requests sent | ${sent} |`,
  `| accepted (utr returned) | ${accepted.length} (${distinct} distinct) |`,
  `| answered otherwise | ${Object.entries(statuses).filter(([s]) => s !== '200').map(([s, n]) => `${n} × ${s}`).join(', ') || 'none'} |`,
  ...[...refusals].map(([when, seen]) => `| … ${when} | ${Object.entries(seen).map(([s, n]) => `${n} × ${s}`).join(', ')} |`),
  `| no answer (connection cut while the API was killed) | ${transportErrors} |`,
  `| orders in the database | ${placed}: the ${placed - distinct} beyond the accepted ones were committed while their answer was lost to a fault (charged once, in the buyer's order list) |`,
  `| idempotent repeats (same key, same body) | ${replays.sent}: ${replays.sameUtr} same utr, ${replays.refused} refused (503 during a fault), **${replays.otherUtr} a second order** |`,
  `| orders by status after settling | ${Object.entries(report.ordersByStatus).map(([s, n]) => `${s} ${n}`).join(', ')} |`,
  `| supplier 1's answers | ${providerAnswers.delivered} delivered, ${providerAnswers.unavailable} delivered but answered 503, ${providerAnswers.refused} refused, ${providerAnswers.failing} failed (its failing minute) |`,
  `| suppliers 2 and 3 | ${suppliers.slice(1).map((s) => s.received).join(' and ')} orders received |`,
  `| webhook events for accounts | ${hooks!.events}: ${hooks!.deliveries} deliveries, **${hooks!.deliveries - hooks!.delivered} not delivered**, ${hooks!.attempts} attempts; the receiver accepted ${received.events} distinct events in ${received.requests} requests (${received.refused} answered 503 while an endpoint was down) |`,
  `| **lost orders** (accepted, not in the database) | **${counts.lostOrders}** |`,
  `| **codes delivered twice** | **${counts.codesDeliveredTwice}** |`,
  `| lines holding the wrong number of codes | ${counts.linesWithWrongCodeCount} |`,
  `| campaign caps exceeded | ${counts.campaignCapsExceeded} |`,
  `| **money mismatches** (accounts whose balance ≠ ledger, orders whose debit/refund is off) | **${counts.ledgerMismatches + counts.orderMoneyMismatches}** |`,
  `| orders not settled (still to move on by themselves) | ${counts.unsettledOrders} |`,
  `| processes that ended without being killed (crashes) | ${crashed} |`,
  `| money: credited ${money!.credited}, debited ${money!.debited}, refunded ${money!.refunded}, balances now ${money!.balances} | |`,
  `| load time | ${loadSeconds.toFixed(0)} s (${(accepted.length / loadSeconds).toFixed(0)} accepted orders/s) |`,
  '',
  '## Memory',
  '',
  'Each process sampled every 10 s during the load: its resident memory, and the heap it keeps: the V8 heap in use',
  'right after its latest major collection (its own /metrics, `nodejs_heap_used_after_major_gc_bytes`; the heap in',
  'use at any moment also counts the garbage waiting for the next one). Over the last two thirds of the run (the',
  'window), every process with six kept-heap figures there at least (one killed and started again late has too few',
  'to say anything and is left out; the one it replaced is judged over its own time): resident memory as its last',
  'three samples against its first three, and the kept heap as the median of its last third of figures against the',
  'median of its first third. The kept heap is the one held to 10 %: resident memory follows the heap\'s capacity,',
  'which V8 sizes to the load, not to what is kept.',
  '',
  '| process | samples | resident: start → end (peak), MiB | resident growth | kept heap: start → end, MiB | kept heap growth |',
  '|---|---:|---:|---:|---:|---:|',
  ...memoryUse.map(
    (m) =>
      `| ${m.role} | ${m.samples} (${m.windowSamples} in the window) | ${m.rss.first.toFixed(0)} → ${m.rss.last.toFixed(0)} (${m.rss.peak.toFixed(0)}) | ${(m.rss.growth * 100).toFixed(1)} % | ${m.heap.first.toFixed(1)} → ${m.heap.last.toFixed(1)} | ${(m.heap.growth * 100).toFixed(1)} % |`,
  ),
  '',
  healthy
    ? 'Every invariant of DESIGN §2 held, every event reached its endpoint, and no process\'s kept heap grew by more than 10 %.'
    : '**Something did not hold: see the counts above.**',
  '',
];
// A relative --report is taken from the project root, where `npm run soak` runs.
const reportFile = resolve(ROOT, args.report!);
await mkdir(dirname(reportFile), { recursive: true });
await writeFile(reportFile, lines.join('\n'));
log(`report written to ${reportFile}: ${healthy ? 'all invariants held' : 'INVARIANT VIOLATED'}`);
const processLogs = join(tmpdir(), `${name}.log`);
await writeFile(processLogs, cluster.logs());
log(`the processes' own logs: ${processLogs}`);
process.stdout.write(`${JSON.stringify({ orders: ORDERS, accepted: accepted.length, ...counts, pending, webhooksHeld, memoryHeld })}\n`);

await cluster.stop();
await redis.close();
await db.close();
for (const supplier of suppliers) await supplier.close();
await receiver.close();
await admin.unsafe(`drop database if exists "${name}" with (force)`);
await admin.end({ timeout: 5 });
process.exit(healthy ? 0 : 1);
