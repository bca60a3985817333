/**
 * `npm run bench [-- --quick] [--api | --placement-first] [--profile <dir>]`: the service started as `npm start` starts it, on its own database
 * (topup_bench, recreated each run) and BullMQ prefix (bench), measured against this machine's
 * own ceilings in the same run. Prints a table and writes results/latest.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { loadConfig } from '../../src/core/env.js';
import { QUEUE_NAMES } from '../../src/queues/index.js';
import { bareHonoCeiling, bullmqCeiling, rawTxCeiling, removeRawTxRows, sameBytesCeiling } from './ceilings.js';
import { createAccounts, createKeys, dropDatabase, issueTokens, loadCatalog, loadCodes, loadOrderHistory, loadPrices, loadReviews, registerEndpoints, resetDatabase } from './data.js';
import { startCountingReceiver } from './receiver.js';
import { countRedisWork } from './redis-work.js';
import { freePort, sleep, spawnTs, waitForHttp, workerProcessesOf, type Child, type SpawnOptions } from '../helpers/processes.js';
import { startRedisCluster, startRedisWithReplica } from '../helpers/redis-topologies.js';
import { compareFreeCodeReads } from './free-codes.js';
import { measureOrderList } from './order-list.js';
import { loadVolume, timerPlans } from './plans.js';
import { drive, layoutSizes, loadPartitioningData, merged, MONTHLY, PARTITIONING_ACCOUNTS, partitioningOperations } from './partitioning.js';
import { Report, TURN_READS } from './report.js';
import { percentile, type Measured } from './load.js';
import { bothTurns, cardOrders, drainBacklog, endToEnd, measureHttp, measureHttpAcross, measureInTurns, readBodies, readPaths, reads, topUpOrders, waitForCardOrders, type Target } from './scenarios.js';

const SIZES = {
  quick: { seconds: 3, warmup: 1, accounts: 200, codesPerService: 1200, e2eOrders: 2000, growthCodes: 50_000, growthOrders: 5_000 },
  full: { seconds: 12, warmup: 3, accounts: 1000, codesPerService: 3000, e2eOrders: 10_000, growthCodes: 1_000_000, growthOrders: 100_000 },
};
/** Orders and deliveries for `--plans` (C23: the timers' plans at the volume of years of operation). */
const PLAN_VOLUME = 10_000_000;
const CATALOG = { topUps: 20, cards: 20, servicesPerProduct: 5 };
/**
 * C26: the allow-list of the access rows' accounts: ranges and addresses of both families, the load generator's own
 * address among them (it connects to the service on 127.0.0.1, and TRUST_PROXY is off: the socket's peer is checked).
 */
const ALLOWED_IPS = ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7', '127.0.0.1'];
const PREFIX = 'bench';
const RESULTS = fileURLToPath(new URL('./results/latest.json', import.meta.url));
const PLANS_RESULTS = fileURLToPath(new URL('./results/latest-plans.txt', import.meta.url));
const FREE_CODES_RESULTS = fileURLToPath(new URL('./results/latest-free-codes.txt', import.meta.url));
const ORDER_LIST_RESULTS = fileURLToPath(new URL('./results/latest-order-list.txt', import.meta.url));
const PARTITIONING_RESULTS = fileURLToPath(new URL('./results/latest-partitioning.txt', import.meta.url));

const size = process.argv.includes('--quick') ? SIZES.quick : SIZES.full;
const databaseUrl = withDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/topup', 'topup_bench');
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const key = randomBytes(32);
const port = await freePort();
/** The service's environment: everything else stays at its defaults, as with a plain `npm start`. */
const serviceEnv = {
  NODE_ENV: 'production',
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  BULLMQ_PREFIX: PREFIX,
  CODE_ENCRYPTION_KEY: key.toString('hex'),
  HOST: '127.0.0.1',
  PORT: String(port),
  // Every request logs its line, as in production; the bench shows only the warnings and errors.
  LOG_LEVEL: 'info',
  // The webhook scenario's receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE: 'true',
};
const config = loadConfig(serviceEnv);
/** `--profile <dir>`: every service process writes a V8 CPU profile there when it stops (open it in Chrome DevTools). */
const profileAt = process.argv.indexOf('--profile');
const spawnOptions: SpawnOptions = {
  nodeFlags: profileAt > 0 && process.argv[profileAt + 1] ? ['--cpu-prof', `--cpu-prof-dir=${process.argv[profileAt + 1]}`] : [],
  showLine: (line) => !/^\{"level":"(debug|info)"/.test(line),
};

const cleanups: Array<() => Promise<unknown>> = [];
const step = (text: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

try {
  await main();
} finally {
  await cleanUp();
}

async function main(): Promise<void> {
  if (process.argv.includes('--plans')) return checkPlans();
  if (process.argv.includes('--free-codes')) return freeCodeReads();
  if (process.argv.includes('--order-list')) return orderListReads();
  if (process.argv.includes('--partitioning')) return comparePartitioning();
  const report = new Report();
  step(`${size === SIZES.quick ? 'quick' : 'full'} run: ${size.seconds} s per scenario, database ${new URL(databaseUrl).pathname.slice(1)}, prefix ${PREFIX}, load average ${loadavg()[0]!.toFixed(1)}`);
  await clearRedis();
  await resetDatabase(databaseUrl);
  const database = connectDatabase(databaseUrl, { max: 8 });
  cleanups.push(() => database.close());

  step('loading data');
  const data = await loadData(database);
  if (process.argv.includes('--webhooks')) {
    await measureWebhooksAlone(report, database.sql, data);
    return finish(report);
  }
  if (process.argv.includes('--shards')) {
    await measureShardsAlone(report, database.sql, data);
    return finish(report);
  }
  step('ceilings (the service is not running yet)');
  await measureCeilings(report, database, data);
  if (process.argv.includes('--api')) {
    await measureApiAlone(report, database.sql, data, { withReads: true });
    await measureDrain(report, database.sql);
  } else if (process.argv.includes('--placement-first')) {
    const tokens = await measureApiAlone(report, database.sql, data, { withReads: false });
    await measureDrain(report, database.sql);
    await comparePlacementFirst(report, database.sql, data, tokens);
  } else {
    step(`starting the service (src/main.ts) on 127.0.0.1:${port}`);
    await measureService(report, database, data);
  }

  finish(report);
}

function finish(report: Report): void {
  process.stdout.write(`\n${report.table()}\n\n`);
  report.save(RESULTS);
  step(`written ${RESULTS}`);
}

/** `--webhooks`: the webhook rows alone, on a service started as `npm start` starts it (no ceiling rows). */
async function measureWebhooksAlone(report: Report, sql: Database['sql'], data: Data): Promise<void> {
  step(`starting the service (src/main.ts) on 127.0.0.1:${port}`);
  const service = await start('src/main.ts');
  await waitForWorkers(1, service);
  const target = serviceTarget(sql, service);
  const tokens = await issueTokens(target.baseUrl, data.many);
  await drain(target);
  await measureWebhooks(report, target, data, tokens);
  await service.stop();
}

/** `--free-codes`: a batch of free codes taken from the start of their index and from after the newest given out (free-codes.ts). */
async function freeCodeReads(): Promise<void> {
  await resetDatabase(databaseUrl);
  const database = connectDatabase(databaseUrl, { max: 2 });
  cleanups.push(() => database.close());
  const catalog = await loadCatalog(database.db, { topUps: 1, cards: 1, servicesPerProduct: 2 });
  const [account] = await createAccounts(database.db, 1, 'codes');
  await loadOrderHistory(database.sql, config.codeEncryptionKey, [account!.id], 1);
  const [line] = await database.sql<{ id: string }[]>`select id from order_lines limit 1`;
  const services = catalog.cardServices.map((service) => service.id) as [number, number];
  step(`taking 120,000 codes of each of two services, 128 at a time, in turns`);
  const lines = await compareFreeCodeReads(database.sql, services, Number(line!.id));
  const text = [`Free codes taken 128 at a time, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`, '', ...lines].join('\n');
  writeFileSync(FREE_CODES_RESULTS, `${text}\n`);
  process.stdout.write(`\n${text}\n\n`);
  step(`written ${FREE_CODES_RESULTS}`);
}

/** `--order-list`: the order list's statement alone, on 200 accounts of 25 one-line card orders each (order-list.ts). */
async function orderListReads(): Promise<void> {
  await resetDatabase(databaseUrl);
  const database = connectDatabase(databaseUrl, { max: 2 });
  cleanups.push(() => database.close());
  await loadCatalog(database.db, CATALOG);
  const accounts = await createAccounts(database.db, 200, 'list');
  step('loading 25 card orders of each of 200 accounts');
  await loadOrderHistory(database.sql, key, accounts.map((a) => a.id), 25);
  step(`reading first pages, ${size.seconds} s a turn`);
  const lines = await measureOrderList(databaseUrl, accounts.map((a) => a.id), size.seconds);
  const text = [`The order list's statement, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`, '', ...lines].join('\n');
  writeFileSync(ORDER_LIST_RESULTS, `${text}\n`);
  process.stdout.write(`\n${text}\n\n`);
  step(`written ${ORDER_LIST_RESULTS}`);
}

/**
 * `--partitioning [--orders N]`: orders, order lines and the ledger as they are against the same tables partitioned by
 * month (partitioning.ts), at N orders (PLAN_VOLUME by default): each operation driven by 8 callers for `size.seconds`
 * per turn, in turns A, B, B, A, with PostgreSQL's JIT off and on. Writes results/latest-partitioning.txt.
 */
async function comparePartitioning(): Promise<void> {
  const at = process.argv.indexOf('--orders');
  const orders = at > 0 ? Number(process.argv[at + 1]) : PLAN_VOLUME;
  if (!Number.isSafeInteger(orders) || orders < 10_000) throw new Error('--orders takes a whole number of at least 10,000');
  await resetDatabase(databaseUrl);
  // Each layout with JIT off and with PostgreSQL's default (on): a plan over every month's partition is costed high
  // enough to be compiled at each call.
  const connect = (settings: Record<string, string>) => {
    const url = new URL(databaseUrl);
    for (const [name, value] of Object.entries(settings)) url.searchParams.set(name, value);
    const database = connectDatabase(url.toString(), { max: 8 });
    cleanups.push(() => database.close());
    return database;
  };
  const database = connect({ jit: 'off' });
  const layouts = {
    plain: { jitOff: database.db, jitOn: connect({ jit: 'on' }).db },
    monthly: { jitOff: connect({ search_path: `${MONTHLY},public`, jit: 'off' }).db, jitOn: connect({ search_path: `${MONTHLY},public`, jit: 'on' }).db },
  };
  const started = Date.now();
  const catalog = await loadCatalog(database.db, { topUps: 1, cards: 4, servicesPerProduct: 5 });
  const accounts = await createAccounts(database.db, PARTITIONING_ACCOUNTS, 'history');
  const data = { accountIds: accounts.map((a) => a.id), serviceIds: catalog.cardServices.map((s) => s.id), orders };
  await loadPartitioningData(database.sql, data, step);
  const sizes = await layoutSizes(database.sql);
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  step(`loaded in ${Math.round((Date.now() - started) / 1000)} s: as they are ${gib(sizes.plain)}, by month ${gib(sizes.monthly)}`);
  const lines = [
    `Orders, order lines and the ledger as they are and partitioned by month, ${orders.toLocaleString('en')} orders over a year, ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)}`,
    `Tables with their indexes: as they are ${gib(sizes.plain)}, by month ${gib(sizes.monthly)}. 8 callers, ${size.seconds} s a turn, turns A, B, B, A.`,
    '',
    '| operation | JIT | as they are: calls/s | p50 ms | p99 ms | by month: calls/s | p50 ms | p99 ms | by month ÷ as they are |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const operation of await partitioningOperations(database.sql, data)) {
    for (const jit of ['jitOff', 'jitOn'] as const) {
      step(`${operation.name}, JIT ${jit === 'jitOn' ? 'on' : 'off'}: ${operation.what}`);
      const [plain, monthly] = [layouts.plain[jit], layouts.monthly[jit]];
      const turn = (db: typeof plain) => drive(() => operation.run(db), size.seconds, 8);
      await drive(() => operation.run(plain), size.warmup, 8);
      await drive(() => operation.run(monthly), size.warmup, 8);
      const plainFirst = await turn(plain);
      const monthlyFirst = await turn(monthly);
      const monthlySecond = await turn(monthly);
      const plainSecond = await turn(plain);
      const [asTheyAre, byMonth] = [merged(plainFirst, plainSecond), merged(monthlyFirst, monthlySecond)];
      const rate = (d: typeof asTheyAre) => d.calls / d.seconds;
      const figures = (d: typeof asTheyAre) => `${rate(d).toFixed(0)} | ${percentile(d.latencies, 50).toFixed(2)} | ${percentile(d.latencies, 99).toFixed(2)}`;
      lines.push(`| ${operation.name}: ${operation.what} | ${jit === 'jitOn' ? 'on' : 'off'} | ${figures(asTheyAre)} | ${figures(byMonth)} | ${(rate(byMonth) / rate(asTheyAre)).toFixed(3)} |`);
    }
  }
  writeFileSync(PARTITIONING_RESULTS, `${lines.join('\n')}\n`);
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  step(`written ${PARTITIONING_RESULTS}`);
}

/**
 * `--plans`: loads PLAN_VOLUME orders and deliveries, runs every worker timer and a scrape on them with each statement
 * recorded, and EXPLAINs each (test/bench/plans.ts); writes results/latest-plans.txt and fails on a sequential scan
 * of a large table.
 */
async function checkPlans(): Promise<void> {
  await clearRedis();
  await resetDatabase(databaseUrl);
  const database = connectDatabase(databaseUrl, { max: 2 });
  cleanups.push(() => database.close());
  const started = Date.now();
  step(`loading ${PLAN_VOLUME.toLocaleString('en')} orders and deliveries`);
  await loadVolume(database.db, database.sql, PLAN_VOLUME);
  const [sizes] = await database.sql<{ orders: string; deliveries: string; database: string }[]>`
    select (select reltuples::bigint from pg_class where relname = 'orders')::text as orders,
      (select reltuples::bigint from pg_class where relname = 'webhook_deliveries')::text as deliveries,
      pg_size_pretty(pg_database_size(current_database())) as database`;
  step(`loaded in ${Math.round((Date.now() - started) / 1000)} s: ${sizes!.orders} orders, ${sizes!.deliveries} deliveries, ${sizes!.database}`);
  const plans = await timerPlans(config, database.sql, { settleMs: 10_000 });
  const lines = [
    `Timer and scrape statements at ${sizes!.orders} orders and ${sizes!.deliveries} deliveries (${sizes!.database}), ${new Date().toISOString()}`,
    '',
    ...plans.map((plan) => `${plan.seqScans.length ? `SEQ SCAN ${plan.seqScans.join(', ')}` : 'ok'} | ${plan.indexes.join(', ') || '(small tables only)'} | ${plan.statement.slice(0, 160)}`),
  ];
  const scanning = plans.filter((plan) => plan.seqScans.length > 0).length;
  lines.push('', `${plans.length} statements, ${scanning} with a sequential scan of a large table`);
  writeFileSync(PLANS_RESULTS, `${lines.join('\n')}\n`);
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  step(`written ${PLANS_RESULTS}`);
  if (scanning > 0) process.exitCode = 1;
}

type Data = Awaited<ReturnType<typeof loadData>>;

async function loadData({ db, sql }: Database) {
  const catalog = await loadCatalog(db, CATALOG);
  const many = await createAccounts(db, size.accounts, 'many');
  const [hot] = await createAccounts(db, 1, 'hot');
  const [history] = await createAccounts(db, 1, 'history');
  const { euro, tierId } = await loadPrices(db, catalog);
  const inEuro = await createAccounts(db, size.accounts, 'euro', { currency: euro });
  const tiered = await createAccounts(db, size.accounts, 'tiered', { priceTierId: tierId });
  const allowListed = await createAccounts(db, size.accounts, 'listed', { allowedIps: ALLOWED_IPS });
  const readKeys = await createKeys(db, allowListed, 'read');
  await loadReviews(db, many.slice(0, 5).map((a) => a.id));
  await loadCodes(sql, key, size.codesPerService, 'stock');
  return { catalog, many, hot: hot!, history: history!, inEuro, tiered, allowListed, readKeys };
}

async function measureCeilings(report: Report, { sql }: Database, { catalog, many, hot }: Data): Promise<void> {
  report.add('ceiling.bare-hono', await bareHonoCeiling(size.seconds, size.warmup));
  const cardService = catalog.cardServices[0]!;
  const accountIds = many.map((a) => a.id);
  report.add('ceiling.raw-tx.many-accounts', await rawTxCeiling(databaseUrl, { accountIds, cardService }, size.seconds, size.warmup));
  report.add('ceiling.raw-tx.one-account', await rawTxCeiling(databaseUrl, { accountIds: [hot.id], cardService }, size.seconds, size.warmup));
  await removeRawTxRows(databaseUrl);
  const queueCeiling = { redisUrl, prefix: PREFIX, concurrency: config.WORKER_CONCURRENCY, jobs: size.e2eOrders };
  report.add('ceiling.bullmq.noop', await bullmqCeiling(queueCeiling));
  const touch = async (n: number) => void (await sql`update accounts set updated_at = now() where id = ${accountIds[n % accountIds.length]!}`);
  report.add('ceiling.bullmq.update', await bullmqCeiling({ ...queueCeiling, job: touch, sql }));
}

/**
 * The API's own cost while nothing fulfils beside it (`placement.card.api-only`, and with `--api` the reads too): an
 * API process with RUN_WORKERS=false and no worker process anywhere; its orders wait in the queue for the service
 * started next. Answers the tokens it issued.
 */
async function measureApiAlone(report: Report, sql: Database['sql'], data: Data, { withReads }: { withReads: boolean }): Promise<string[]> {
  const { catalog, many, inEuro, allowListed } = data;
  step('the API alone (RUN_WORKERS=false, no worker process): placement' + (withReads ? ' and reads' : ''));
  const api = await start('src/main.ts', { RUN_WORKERS: 'false' });
  const target: Target = {
    baseUrl: `http://127.0.0.1:${port}`,
    seconds: size.seconds,
    warmup: size.warmup,
    sql,
    pids: () => ({ 'api (workers off)': api.process.pid }),
    ensureRunning: () => api.ensureRunning(),
  };
  const tokens = await issueTokens(target.baseUrl, many);
  report.add('placement.card.api-only', await measureHttp(target, cardOrders(catalog, tokens)), 'ceiling.raw-tx.many-accounts');
  // C24: the same orders from accounts in EUR, every price converted at an 8-decimal rate, in turns with the plain
  // accounts' (a single run of each drifted by ±25% between runs on this box).
  const converted = cardOrders(catalog, await issueTokens(target.baseUrl, inEuro));
  await compareInTurns(report, target, 'ceiling.raw-tx.many-accounts', ['prices.placement.card.plain', cardOrders(catalog, tokens)], ['prices.placement.card.converted', converted]);
  // C26: the same orders from accounts whose address allow-list holds the load generator's address, checked on every
  // request, in turns with those of accounts without a list.
  const listed = cardOrders(catalog, await issueTokens(target.baseUrl, allowListed));
  await compareInTurns(report, target, 'ceiling.raw-tx.many-accounts', ['access.placement.card.open', cardOrders(catalog, tokens)], ['access.placement.card.allow-listed', listed]);
  if (withReads) await measureReads(report, target, data, tokens);
  // Autocannon abandons its last in-flight requests: let the process finish them before SIGTERM.
  await sleep(1000);
  await api.stop();
  return tokens;
}

/**
 * Fulfilment alone (`fulfilment.card.drain`): one worker process (`workers/main.ts`) started on the card orders
 * `placement.card.api-only` left in the queue, with nothing else running, until it has drained them.
 */
async function measureDrain(report: Report, sql: Database['sql']): Promise<void> {
  step('fulfilment alone: one worker process drains the orders the API placed with no worker running');
  let worker: Child | null = null;
  const target: Target = {
    baseUrl: '',
    seconds: size.seconds,
    warmup: size.warmup,
    sql,
    pids: () => ({ 'worker process': worker?.process.pid }),
    ensureRunning: () => worker?.ensureRunning(),
  };
  // The backlog as a shop's database would hold it: placed since the last scenario, vacuumed and analyzed since.
  await keptAsAutovacuumWould(sql);
  const started = async () => {
    worker = spawnTs('workers/main.ts', serviceEnv, spawnOptions);
    cleanups.push(() => worker!.stop());
    await waitForWorkers(1, worker);
  };
  report.add('fulfilment.card.drain', await drainBacklog(target, started), 'ceiling.bullmq.update');
  await (worker as Child | null)?.stop();
}

/** Each read against a bare node:http server sending the same bytes for the same paths. */
async function measureReads(report: Report, target: Target, { catalog, tiered: tieredAccounts, readKeys }: Data, tokens: string[]): Promise<void> {
  const read = reads(catalog, tokens);
  // C24: the catalog's cached reads as accounts on a price tier see them (one variant per tier), each right after the
  // same read by the plain accounts.
  const tiered = reads(catalog, await issueTokens(target.baseUrl, tieredAccounts));
  // C26: the same reads with tokens of read-scope keys of accounts with an allow-list, in turns with full keys' tokens
  // of accounts without one.
  const readScope = reads(catalog, await issueTokens(target.baseUrl, readKeys));
  const paths = readPaths(catalog);
  for (const name of ['top-up-list', 'top-up-details', 'card-services', 'card-orders'] as const) {
    const bodies = await readBodies(target.baseUrl, paths[name], tokens[0]!);
    report.add(`ceiling.same-bytes.${name}`, await sameBytesCeiling(bodies, size.seconds, size.warmup));
    report.add(`read.${name}`, await measureHttp(target, read[name]), `ceiling.same-bytes.${name}`);
    if ((TURN_READS as readonly string[]).includes(name)) {
      await compareInTurns(report, target, `read.${name}`, [`prices.read.${name}.plain`, read[name]], [`prices.read.${name}.tiered`, tiered[name]]);
      await compareInTurns(report, target, `read.${name}`, [`access.read.${name}.full`, read[name]], [`access.read.${name}.read-scope`, readScope[name]]);
    }
  }
}

/**
 * Two loads measured in turns (measureInTurns, A, B, B, A): the first row against `ceiling`, the second against the
 * first.
 */
async function compareInTurns(
  report: Report,
  target: Target,
  ceiling: string,
  [baseName, base]: [string, () => autocannon.Request],
  [name, load]: [string, () => autocannon.Request],
): Promise<void> {
  const [baseFigures, figures] = await measureInTurns(target, base, load);
  report.add(baseName, baseFigures, ceiling);
  report.add(name, figures, baseName);
}

async function measureService(report: Report, { sql }: Database, data: Data): Promise<void> {
  const { catalog, hot, history } = data;
  const tokens = await measureApiAlone(report, sql, data, { withReads: false });
  await measureDrain(report, sql);
  await comparePlacementFirst(report, sql, data, tokens);
  const service = await start('src/main.ts');
  // /health answers before the worker process it forks is ready: measure nothing while it is starting.
  await waitForWorkers(1, service);
  let secondWorker: Child | null = null;
  let secondApi: Child | null = null;
  let unnamedApi: Child | null = null;
  const target: Target = {
    baseUrl: `http://127.0.0.1:${port}`,
    seconds: size.seconds,
    warmup: size.warmup,
    sql,
    pids: () => ({
      service: service.process.pid,
      'its worker process': childOf(service.process.pid),
      'worker-2': secondWorker?.process.pid,
      'api-2': secondApi?.process.pid,
      'api-unnamed-statements': unnamedApi?.process.pid,
    }),
    ensureRunning: () => {
      service.ensureRunning();
      secondWorker?.ensureRunning();
      secondApi?.ensureRunning();
    },
  };
  const [hotToken, historyToken] = await issueTokens(target.baseUrl, [hot, history]);

  step('placement (the worker process of npm start fulfils meanwhile)');
  await drain(target);
  report.add('placement.card', await measureHttp(target, cardOrders(catalog, tokens)), 'ceiling.raw-tx.many-accounts');
  report.add('placement.topup', await measureHttp(target, topUpOrders(catalog, tokens)), 'ceiling.raw-tx.many-accounts');
  report.add('placement.hot-account', await measureHttp(target, cardOrders(catalog, [hotToken!])), 'ceiling.raw-tx.one-account');
  await drain(target);

  step('end to end');
  report.add('e2e.card.1-worker', await endToEnd(target, cardOrders(catalog, tokens), size.e2eOrders), 'ceiling.bullmq.update');
  await drain(target);
  const worker = spawnTs('workers/main.ts', serviceEnv, spawnOptions);
  cleanups.push(() => worker.stop());
  await waitForWorkers(2, worker);
  secondWorker = worker;
  report.add('e2e.card.2-workers', await endToEnd(target, cardOrders(catalog, tokens), size.e2eOrders), 'ceiling.bullmq.update');
  await drain(target);
  await worker.stop();
  secondWorker = null;

  await measureWebhooks(report, target, data, tokens);

  step('reads, each against a bare node:http server sending the same bytes');
  await measureReads(report, target, data, tokens);
  const read = reads(catalog, tokens);

  step(`growth: +${size.growthCodes} codes in inventory, one account with ${size.growthOrders} orders`);
  await loadCodes(sql, key, Math.ceil(size.growthCodes / catalog.cardServices.length), 'growth');
  await loadOrderHistory(sql, key, [history.id], size.growthOrders);
  report.add('growth.placement.card', await measureHttp(target, cardOrders(catalog, tokens)), 'placement.card');
  await drain(target);
  report.add('growth.read.card-orders', await measureHttp(target, reads(catalog, [historyToken!])['card-orders']), 'read.card-orders');
  // A deep page of that history (nine tenths down), by its number (offset) and as next_page_url asks it (keyset).
  const deepPage = Math.floor((size.growthOrders / 10) * 0.9);
  const deepList = await (await fetch(`${target.baseUrl}/api/get-card/orders?page=${deepPage - 1}`, { headers: { Authorization: `Bearer ${historyToken!}` } })).json();
  const deepNext = new URL((deepList as { message: { next_page_url: string } }).message.next_page_url);
  const deepGet = (path: string) => () => ({ method: 'GET' as const, path, headers: { Authorization: `Bearer ${historyToken!}` } });
  await compareInTurns(
    report,
    target,
    'growth.read.card-orders',
    ['growth.read.card-orders.deep-by-number', deepGet(`/api/get-card/orders?page=${deepPage}`)],
    ['growth.read.card-orders.deep-by-cursor', deepGet(`${deepNext.pathname}${deepNext.search}`)],
  );

  step('scale-out: the same load on one API process, then spread over two (the second without workers)');
  const apiPort = await freePort();
  const api2 = spawnTs('src/main.ts', { ...serviceEnv, PORT: String(apiPort), RUN_WORKERS: 'false' }, spawnOptions);
  cleanups.push(() => api2.stop());
  await waitForHttp(`http://127.0.0.1:${apiPort}/health`, api2);
  secondApi = api2;
  const urls = [target.baseUrl, `http://127.0.0.1:${apiPort}`];
  report.add('scale.placement.card.1-api', await measureHttp(target, cardOrders(catalog, tokens)), 'growth.placement.card');
  await drain(target);
  report.add('scale.placement.card.2-api', await measureHttpAcross(target, urls, cardOrders(catalog, tokens)), 'scale.placement.card.1-api');
  await drain(target);
  report.add('scale.read.top-up-details.1-api', await measureHttp(target, read['top-up-details']), 'read.top-up-details');
  report.add('scale.read.top-up-details.2-api', await measureHttpAcross(target, urls, read['top-up-details']), 'scale.read.top-up-details.1-api');

  step('behind a transaction pooler (C21): an API process with DATABASE_PREPARED_STATEMENTS=false, the same load');
  const unnamedPort = await freePort();
  const unnamed = spawnTs('src/main.ts', { ...serviceEnv, PORT: String(unnamedPort), RUN_WORKERS: 'false', DATABASE_PREPARED_STATEMENTS: 'false' }, spawnOptions);
  cleanups.push(() => unnamed.stop());
  await waitForHttp(`http://127.0.0.1:${unnamedPort}/health`, unnamed);
  unnamedApi = unnamed;
  const unnamedUrl = [`http://127.0.0.1:${unnamedPort}`];
  report.add('pooler.placement.card', await measureHttpAcross(target, unnamedUrl, cardOrders(catalog, tokens)), 'scale.placement.card.1-api');
  await drain(target);
  report.add('pooler.read.top-up-details', await measureHttpAcross(target, unnamedUrl, read['top-up-details']), 'scale.read.top-up-details.1-api');
  await unnamed.stop();
  unnamedApi = null;

  await sleep(2000);
  await api2.stop();
  await service.stop();
  await compareShards(report, sql, catalog, tokens);
}

/**
 * The queues over a 3-master Redis Cluster (a replica each) against one Redis with a replica (inFreshTurns): both sides
 * copy every write once, as production keeps them, and both start without the run's jobs.
 */
async function compareShards(report: Report, sql: Database['sql'], catalog: Data['catalog'], tokens: string[]): Promise<void> {
  step('queues over a 3-master Redis Cluster (a slot per queue, QUEUE_SHARDS=3) against one Redis, each with replicas, in turns');
  const single = await startRedisWithReplica();
  cleanups.push(() => single.stop());
  const cluster = await startRedisCluster();
  cleanups.push(() => cluster.stop());
  const clustered = { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PASSWORD: cluster.password, QUEUE_SHARDS: '3' };
  const { a: overOne, b: overCluster } = await inFreshTurns(
    sql,
    catalog,
    tokens,
    ['one-redis', { REDIS_URL: single.url }, { pids: async () => single.pids(), urls: [single.url] }],
    ['cluster', clustered, { pids: async () => cluster.pids(), urls: cluster.nodes.split(',').map((node) => `redis://:${cluster.password}@${node}`) }],
  );
  report.add('shards.placement.card.one-redis', overOne.placement, 'placement.card');
  report.add('shards.e2e.card.one-redis', overOne.e2e, 'e2e.card.1-worker');
  report.add('shards.placement.card.cluster', overCluster.placement, 'shards.placement.card.one-redis');
  report.add('shards.e2e.card.cluster', overCluster.e2e, 'shards.e2e.card.one-redis');
  await cluster.stop();
  await single.stop();
}

/** `--shards`: the shard rows alone (compareShards), on tokens issued by a service started for them (no ceiling rows). */
async function measureShardsAlone(report: Report, sql: Database['sql'], data: Data): Promise<void> {
  const service = await start('src/main.ts');
  const tokens = await issueTokens(`http://127.0.0.1:${port}`, data.many);
  await service.stop();
  await compareShards(report, sql, data.catalog, tokens);
}

/**
 * With one webhook endpoint per account (C17): placement and fulfilment write the outbox, the service's workers
 * deliver to a local receiver. Leaves every endpoint deleted.
 */
async function measureWebhooks(report: Report, target: Target, data: Data, tokens: string[]): Promise<void> {
  step('with one webhook endpoint per account (C17): placement and fulfilment write the outbox, workers deliver');
  const { catalog, many, hot } = data;
  const { sql } = target;
  const receiver = await startCountingReceiver();
  cleanups.push(() => receiver.close());
  await registerEndpoints(sql, key, [...many, hot].map((a) => a.id), receiver.url);
  report.add('placement.card.webhooks', await measureHttp(target, cardOrders(catalog, tokens)), 'placement.card');
  await drain(target);
  await deliveriesSettled(sql, receiver, 0);
  // Orders of 64 accounts, each with its endpoint: the events of each order go to the endpoint of its account. Measured
  // in turns with one of the 64 endpoints answering 9 s after each request (prompt, slow, slow, prompt, half the
  // orders each): the others' figures beside a slow endpoint against the same load without one, on the same host
  // minutes apart rather than one after the other (the p99 of a delivery follows that of the completion it waits for).
  const webhookTokens = tokens.slice(0, 64);
  const [slowEndpoint] = await sql<{ id: number }[]>`select id from webhook_endpoints where account_id = ${many[0]!.id}`;
  const webhookTurns = { prompt: { e2e: [] as Measured[], delivered: [] as Measured[] }, slow: { e2e: [] as Measured[], delivered: [] as Measured[] } };
  for (const which of ['prompt', 'slow', 'slow', 'prompt'] as const) {
    await sql`update webhook_endpoints set url = ${which === 'slow' ? receiver.slowUrl : receiver.url} where id = ${slowEndpoint!.id}`;
    const since = await lastEventId(sql);
    webhookTurns[which].e2e.push(await endToEnd(target, cardOrders(catalog, webhookTokens), size.e2eOrders / 2));
    await drain(target);
    webhookTurns[which].delivered.push(await deliveriesSettled(sql, receiver, since, which === 'slow' ? slowEndpoint!.id : null));
  }
  const both = (turns: Measured[]) => twoTurns('measured in turns prompt, slow, slow, prompt', turns);
  report.add('e2e.card.webhooks', both(webhookTurns.prompt.e2e), 'e2e.card.1-worker');
  report.add('webhooks.delivered', both(webhookTurns.prompt.delivered), 'e2e.card.webhooks');
  report.add('e2e.card.webhooks.slow-endpoint', both(webhookTurns.slow.e2e), 'e2e.card.webhooks');
  report.add('webhooks.delivered.slow-endpoint', both(webhookTurns.slow.delivered), 'webhooks.delivered');
  await sql`update webhook_endpoints set deleted_at = now()`;
}

/** Waits until /ready says the worker process of the service is up (its queues may be anywhere Redis is). */
async function waitForReadyWorkers(baseUrl: string, child: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    child.ensureRunning();
    const ready = (await (await fetch(`${baseUrl}/ready`)).json()) as { workers?: string };
    if (ready.workers === 'up') return;
    if (Date.now() > deadline) throw new Error('the worker process was not up after 60 s');
    await sleep(200);
  }
}

/**
 * Placement first (`PLACEMENT_FIRST`): on the service as `npm start` runs it, its worker process yielding to the busy
 * API (on) or not (off), in turns on services started for each (inFreshTurns).
 */
async function comparePlacementFirst(report: Report, sql: Database['sql'], { catalog }: Data, tokens: string[]): Promise<void> {
  step('placement first: the service with its worker process yielding (PLACEMENT_FIRST=true) and not, in turns');
  const { a: off, b: on } = await inFreshTurns(sql, catalog, tokens, ['off', { PLACEMENT_FIRST: 'false' }], ['on', { PLACEMENT_FIRST: 'true' }]);
  report.add('placement-first.placement.card.off', off.placement, 'placement.card.api-only');
  report.add('placement-first.placement.card.on', on.placement, 'placement-first.placement.card.off');
  report.add('placement-first.e2e.card.off', off.e2e, 'fulfilment.card.drain');
  report.add('placement-first.e2e.card.on', on.e2e, 'placement-first.e2e.card.off');
}

/**
 * One configuration of the service in a comparison: its name, its environment, and the Redis its queues live on: its
 * server processes (their CPU is in the notes: a cluster's nodes share the box's cores with everything else) and,
 * for a Redis of the bench's own, its nodes' URLs (the end-to-end notes count its work per order: countRedisWork).
 */
type Side = [string, Record<string, string>, { pids: () => Promise<number[]>; urls: string[] }?];

/** The process of the one Redis at REDIS_URL, as it says itself: none when it is not a redis-server of this host. */
async function oneRedis(): Promise<number[]> {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(redisUrl).hostname)) return [];
  const redis = new Redis(redisUrl);
  try {
    const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
    const command = existsSync(`/proc/${pid}/comm`) ? readFileSync(`/proc/${pid}/comm`, 'utf8').trim() : '';
    return command === 'redis-server' ? [pid] : [];
  } finally {
    redis.disconnect();
  }
}

/**
 * Two configurations of the service as `npm start` runs it, in turns A, B, B, A on a service started for each turn,
 * so that neither is measured on a process warmed by the scenarios before it nor on tables the other left behind:
 * placement.card's load (warmed up, measured, its orders fulfilled), then an end-to-end run (does fulfilment keep up
 * while placement goes on?). Each configuration's figures are its two turns' (rps the mean, p50 and p99 the higher).
 */
async function inFreshTurns(
  sql: Database['sql'],
  catalog: Data['catalog'],
  tokens: string[],
  [aName, aEnv, aRedis]: Side,
  [bName, bEnv, bRedis]: Side,
): Promise<Record<'a' | 'b', { placement: Measured; e2e: Measured }>> {
  const turns = { a: { placement: [] as Measured[], e2e: [] as Measured[] }, b: { placement: [] as Measured[], e2e: [] as Measured[] } };
  // Each turn on tables as autovacuum would keep them: the first after whatever ran before the comparison, the others
  // after the drain that ends the turn before.
  await keptAsAutovacuumWould(sql);
  for (const which of ['a', 'b', 'b', 'a'] as const) {
    const service = await start('src/main.ts', which === 'a' ? aEnv : bEnv);
    await waitForReadyWorkers(`http://127.0.0.1:${port}`, service);
    const redis = which === 'a' ? aRedis : bRedis;
    const redisPids = await (redis?.pids ?? oneRedis)();
    // A service just started: longer than other scenarios' warm-up, so both turns measure it compiled.
    const target = serviceTarget(sql, service, { seconds: size.seconds / 2, warmup: size.warmup * 2 }, redisPids);
    turns[which].placement.push(await measureHttp(target, cardOrders(catalog, tokens)));
    await drain(target);
    const redisWork = redis && (await countRedisWork(redis.urls));
    try {
      const [last] = await sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from orders`;
      // endToEnd returns once its orders are fulfilled: Redis's count is read before the drain's idle polling adds to it.
      const e2e = await endToEnd(target, cardOrders(catalog, tokens), size.e2eOrders / 2);
      if (redisWork) {
        const [placed] = await sql<{ orders: number }[]>`select count(*)::int as orders from orders where id > ${last!.id}`;
        e2e.note = `${e2e.note}, ${await redisWork.perOrder(placed!.orders)}`;
      }
      turns[which].e2e.push(e2e);
    } finally {
      redisWork?.close();
    }
    await drain(target);
    // Autocannon abandons its last in-flight requests: let the service finish them before SIGTERM.
    await sleep(1000);
    await service.stop();
  }
  const both = (measured: Measured[]) => twoTurns(`in turns ${aName}, ${bName}, ${bName}, ${aName} on a service started for each`, measured);
  return { a: { placement: both(turns.a.placement), e2e: both(turns.a.e2e) }, b: { placement: both(turns.b.placement), e2e: both(turns.b.e2e) } };
}

/**
 * One row of a load's two turns (bothTurns), its note saying how the turns ran and what each leaned on. A function, not
 * a const: main() runs under the top-level await above, before a const down here would be initialised.
 */
function twoTurns(how: string, [x, y]: Measured[]) {
  return bothTurns(x!, y!, `${how}; ${x!.note}; then ${y!.note}`);
}

/** Starts an entry point with the service's environment and waits for its health endpoint. */
async function start(file: string, env: Record<string, string> = {}): Promise<Child> {
  const child = spawnTs(file, { ...serviceEnv, ...env }, spawnOptions);
  cleanups.push(() => child.stop());
  await waitForHttp(`http://127.0.0.1:${port}/health`, child);
  return child;
}

/** A scenario's target: the service started as `npm start` (`service`) and the worker process it forked. */
function serviceTarget(sql: Database['sql'], service: Child, timing = { seconds: size.seconds, warmup: size.warmup }, redisPids: number[] = []): Target {
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    ...timing,
    sql,
    pids: () => ({ service: service.process.pid, 'its worker process': childOf(service.process.pid), ...(redisPids.length ? { redis: redisPids } : {}) }),
    ensureRunning: () => service.ensureRunning(),
  };
}

/** The worker process `npm start` forked as `pid`'s child (looked up each time: it may have been restarted). */
function childOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const workers = workerProcessesOf(pid);
  return workers.length === 1 ? workers[0] : undefined;
}

/** Waits until `count` processes consume the fulfilment queue. */
async function waitForWorkers(count: number, child: Child): Promise<void> {
  const queue = new Queue(QUEUE_NAMES.fulfilment, { connection: { url: redisUrl }, prefix: PREFIX });
  try {
    const deadline = Date.now() + 60_000;
    while ((await queue.getWorkersCount()) < count) {
      if (child.process.exitCode !== null) throw new Error('the second worker process exited');
      if (Date.now() > deadline) throw new Error(`fewer than ${count} fulfilment workers after 60 s`);
      await sleep(200);
    }
  } finally {
    await queue.close();
  }
}

/** The newest webhook event so far: the deliveries of a scenario are those of later events. */
async function lastEventId(sql: Database['sql']): Promise<string> {
  const [row] = await sql`select coalesce(max(id), 0)::text as id from webhook_events`;
  return row!.id as string;
}

/**
 * Deliveries per second of the events after `sinceEvent`, from the first event to the last delivery, once every
 * delivery has settled; latency is event written → receiver answered. With `apartFrom`, the figures leave that
 * endpoint's deliveries out (the note gives its own).
 */
async function deliveriesSettled(
  sql: Database['sql'],
  receiver: { received: () => number; firstArrival: (messageId: string) => number | undefined },
  sinceEvent: string | number,
  apartFrom: number | null = null,
): Promise<{ rps: number; p50_ms: number; p99_ms: number; errors: number; note: string }> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [row] = await sql`select count(*) filter (where status = 'pending')::int as pending from webhook_deliveries`;
    if (row!.pending === 0 || Date.now() > deadline) break;
    await sleep(200);
  }
  const figures = (which: 'apart' | 'only') => sql`
    select count(*) filter (where d.status = 'delivered')::int as delivered,
           count(*) filter (where d.status <> 'delivered')::int as other,
           extract(epoch from max(d.delivered_at) - min(e.created_at)) as seconds,
           percentile_cont(0.5) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p50,
           percentile_cont(0.99) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p99
    from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where e.id > ${sinceEvent}
      and ${which === 'apart' ? sql`d.endpoint_id is distinct from ${apartFrom}` : sql`d.endpoint_id = ${apartFrom}`}`;
  const [row] = await figures('apart');
  // Where the time goes: event written (its transaction's start) → request at the receiver counts that transaction's
  // commit, the relay, the queue and the send; the rest is the recording of the answer.
  const events = await sql<{ id: string; written: number }[]>`
    select e.id::text, extract(epoch from e.created_at) * 1000 as written
    from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where e.id > ${sinceEvent} and d.status = 'delivered' and d.endpoint_id is distinct from ${apartFrom}`;
  const toReceiver = events.map((e) => (receiver.firstArrival(`msg_${e.id}`) ?? Number.NaN) - Number(e.written)).filter(Number.isFinite);
  let note = `${row!.delivered} delivered (event written → receiver answered; written → request at the receiver p50 ${Math.round(percentile(toReceiver, 50))} ms, p99 ${Math.round(percentile(toReceiver, 99))} ms), ${receiver.received()} requests received in all`;
  if (apartFrom !== null) {
    const [slow] = await figures('only');
    note += `; the slow endpoint: ${slow!.delivered} delivered, p50 ${Math.round(Number(slow!.p50 ?? 0))} ms, p99 ${Math.round(Number(slow!.p99 ?? 0))} ms`;
  }
  return {
    rps: row!.delivered / Number(row!.seconds ?? 1),
    p50_ms: Number(row!.p50 ?? 0),
    p99_ms: Number(row!.p99 ?? 0),
    errors: row!.other,
    note,
  };
}

/** Between scenarios: the orders of the last one fulfilled, and the database kept as autovacuum would have. */
async function drain(target: Target): Promise<void> {
  const pending = await waitForCardOrders(target);
  if (pending > 0) step(`warning: ${pending} card orders still in initiate`);
  await keptAsAutovacuumWould(target.sql);
}

/**
 * VACUUM ANALYZE when the server runs with autovacuum off (the test machines' PostgreSQL does): a shop's tables are
 * kept by autovacuum; without it a scenario would run on the dead rows of all those before it, and its statements on
 * plans made from the statistics of a near-empty store. Then a CHECKPOINT, so the pages the vacuum dirtied are written
 * now rather than by the checkpointer during the next measurement.
 */
async function keptAsAutovacuumWould(sql: Database['sql']): Promise<void> {
  const [setting] = await sql`select current_setting('autovacuum') as autovacuum`;
  if (setting!.autovacuum !== 'off') return;
  await sql`vacuum analyze`;
  await sql`checkpoint`;
}

/** Removes every Redis key under the bench prefix (jobs, rate-limit counters). */
async function clearRedis(): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    for await (const keys of redis.scanStream({ match: `${PREFIX}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

async function cleanUp(): Promise<void> {
  for (const close of cleanups.splice(0).reverse()) await close().catch((err) => step(`cleanup: ${String(err)}`));
  await clearRedis().catch((err) => step(`cleanup: ${String(err)}`));
  await dropDatabase(databaseUrl).catch((err) => step(`cleanup: ${String(err)}`));
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
