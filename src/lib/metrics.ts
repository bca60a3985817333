import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue, type PrometheusContentType } from 'prom-client';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { withTimeout } from './deadline.js';

/**
 * The V8 heap in use right after this process's latest major (mark-compact) collection: what the process keeps, with
 * the garbage a minor collection leaves in old space gone. `nodejs_heap_size_used_bytes` rises and falls with that
 * garbage between major collections; this one only moves when what is kept does (a leak shows here). One observer per
 * process, whatever the number of registries.
 */
let heapAfterMajorGc: number | null = null;
let gcObserver: PerformanceObserver | null = null;
function observeMajorCollections(): void {
  if (gcObserver) return;
  gcObserver = new PerformanceObserver((list) => {
    const major = list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR);
    if (major) heapAfterMajorGc = getHeapStatistics().used_heap_size;
  });
  gcObserver.observe({ entryTypes: ['gc'] });
}

/**
 * What a scrape reads from PostgreSQL and Redis. Each read is bounded (`scrapeTimeoutMs`): one that fails or
 * does not answer in time leaves its series out of that scrape, so a dead dependency never hangs /metrics.
 */
export type ScrapeSources = {
  /** Jobs per queue and state (waiting, active, delayed, failed). */
  queueJobs: () => Promise<Array<{ queue: string; state: string; count: number }>>;
  /** Unassigned codes per card service. */
  codesAvailable: () => Promise<Array<{ cardServiceId: number; count: number }>>;
  /** stock.low alerts raised so far per card service, and whether it is below its threshold now. */
  lowStock: () => Promise<Array<{ cardServiceId: number; alerts: number; below: boolean }>>;
  /** Per top-up provider: whether its circuit is open, and its orders not yet settled (sent, pending or unknown). */
  providers: () => Promise<Array<{ provider: string; circuitOpen: boolean; unsettled: number }>>;
  /** Per kind: orders in `initiate` that no operator holds, and the age in seconds of the oldest of them. */
  initiate: () => Promise<Array<{ kind: string; count: number; oldestSeconds: number }>>;
};

/** A webhook delivery attempt, by what came of it (`retrying`: it failed and another attempt is scheduled). */
export type WebhookOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

/** The series a process recorded itself (requests, orders, jobs, its process figures), as prom-client's JSON. */
export type ProcessSeries = MetricObjectWithValues<MetricValue<string>>[];

/** The series of DESIGN C16, recorded through typed functions; one registry per process. */
export type Metrics = {
  /** The Content-Type of `render()`. */
  contentType: string;
  /**
   * Every series in the Prometheus text format: this process's own, summed with those of its peers (the
   * worker process `npm start` runs beside the API), and the ones read from PostgreSQL and Redis at scrape.
   */
  render: () => Promise<string>;
  /** This process's own series, for the process that renders them with its own. */
  ownSeries: () => Promise<ProcessSeries>;
  /** Adds a process whose own series `render` includes; a peer that does not answer in time is left out of that scrape. */
  addPeer: (read: () => Promise<ProcessSeries>) => void;
  /** `route` is the route's pattern (`/admin/orders/:utr/refund`), never a raw path. */
  requestServed: (request: { method: string; route: string; status: number }, seconds: number) => void;
  /** `mode`: live, or test for an order of a test key (C25), so test orders never move a live series. */
  orderPlaced: (kind: string, mode: string) => void;
  orderStatusChanged: (kind: string, status: string, mode: string) => void;
  /** One page of an order list answered: from the process's memory (nothing it shows changed since), or read. */
  orderPageServed: (from: 'memory' | 'database') => void;
  /** One run of a job, whatever its outcome. */
  jobRan: (queue: string, seconds: number) => void;
  /** One failed attempt of a job (a retried job counts each time). */
  jobFailed: (queue: string) => void;
  webhookDelivered: (outcome: WebhookOutcome) => void;
  /** A rate-limit decision taken by the per-process stand-in because Redis was unreachable. */
  rateLimitFellBack: () => void;
  /** One call to a top-up provider (`send` or `status`), by what it came to (`skipped`: its circuit was open). */
  providerRequest: (provider: string, request: string, outcome: string, seconds: number) => void;
  /** Rows deleted by retention (C23). */
  retentionDeleted: (table: string, rows: number) => void;
  /** Card fulfilment started (true) or stopped (false) yielding to the API process beside it (placement first). */
  fulfilmentYielding: (yielding: boolean) => void;
};

/** Jobs run from milliseconds (card codes) to the top-up provider's 10 s timeout. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Registries of its own (never prom-client's global one), so two services in one process, such as test
 * apps, count apart: `own` holds what this process records, `scraped` what every process reads alike from
 * PostgreSQL and Redis (summed across processes it would count twice).
 */
export function createMetrics(sources: ScrapeSources, { scrapeTimeoutMs = 2000 } = {}): Metrics {
  const own = new Registry();
  const scraped = new Registry();
  const registers = [own];
  collectDefaultMetrics({ register: own });
  observeMajorCollections();
  new Gauge({
    name: 'nodejs_heap_used_after_major_gc_bytes',
    help: 'V8 heap in use right after the latest major collection: what the process keeps (0 before its first)',
    registers,
    collect() {
      if (heapAfterMajorGc !== null) this.set(heapAfterMajorGc);
    },
  });
  const bounded = <T>(read: () => Promise<T>) => withTimeout(scrapeTimeoutMs, read()).catch(() => [] as T);
  const peers: Array<() => Promise<ProcessSeries>> = [];

  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route', 'status'],
    registers,
  });
  const placed = new Counter({ name: 'orders_placed_total', help: 'Orders accepted (an idempotent replay is not counted again)', labelNames: ['kind', 'mode'], registers });
  const changes = new Counter({
    name: 'order_status_changes_total',
    help: 'Order status changes, by the status moved to',
    labelNames: ['kind', 'status', 'mode'],
    registers,
  });
  const jobDuration = new Histogram({ name: 'job_duration_seconds', help: 'Time a job run took', labelNames: ['queue'], buckets: JOB_BUCKETS, registers });
  const orderPages = new Counter({
    name: 'order_pages_served_total',
    help: 'Order list pages answered, from this process\'s memory or read from the database',
    labelNames: ['from'],
    registers,
  });
  const jobFailures = new Counter({ name: 'jobs_failed_total', help: 'Failed job attempts', labelNames: ['queue'], registers });
  const webhooks = new Counter({ name: 'webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome'], registers });
  const limiterFallbacks = new Counter({
    name: 'rate_limit_fallbacks_total',
    help: 'Rate-limit decisions taken in process memory because Redis was unreachable (limits then count per process)',
    registers,
  });
  // Series read at scrape time from PostgreSQL and Redis, the same from every process. A read that feeds several series
  // runs once per scrape: render() forgets what the last one read.
  const scrapeReads: Array<() => void> = [];
  const oncePerScrape = <T>(read: () => Promise<T[]>): (() => Promise<T[]>) => {
    let current: Promise<T[]> | null = null;
    scrapeReads.push(() => (current = null));
    return () => (current ??= bounded(read));
  };
  type Labels = Record<string, string | number>;
  const scrapedGauge = <T>(name: string, help: string, labelNames: string[], rows: () => Promise<T[]>, sample: (row: T) => [Labels, number]) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [scraped],
      async collect() {
        const read = await rows();
        this.reset();
        for (const row of read) this.set(...sample(row));
      },
    });

  // stock.low alerts are counted on each card service in PostgreSQL, so every process (API or worker) shows the same.
  const lowStock = oncePerScrape(sources.lowStock);
  new Counter({
    name: 'low_stock_alerts_total',
    help: 'stock.low alerts raised per card service (read at scrape time)',
    labelNames: ['card_service_id'],
    registers: [scraped],
    async collect() {
      const rows = await lowStock();
      this.reset();
      for (const { cardServiceId, alerts } of rows) this.inc({ card_service_id: cardServiceId }, alerts);
    },
  });
  scrapedGauge(
    'card_service_below_low_stock_threshold',
    '1 while a card service has fewer unassigned codes than its low_stock_threshold (read at scrape time)',
    ['card_service_id'],
    lowStock,
    ({ cardServiceId, below }) => [{ card_service_id: cardServiceId }, below ? 1 : 0],
  );
  const providerRequests = new Counter({
    name: 'provider_requests_total',
    help: 'Calls to top-up providers, by request (send, status) and outcome (completed, pending, refused, unknown, skipped)',
    labelNames: ['provider', 'request', 'outcome'],
    registers,
  });
  const providerLatency = new Histogram({
    name: 'provider_request_duration_seconds',
    help: 'Time a call to a top-up provider took',
    labelNames: ['provider'],
    buckets: JOB_BUCKETS,
    registers,
  });
  const providerStates = oncePerScrape(sources.providers);
  scrapedGauge(
    'provider_circuit_open',
    "1 while a top-up provider's circuit is open: new orders skip it (read at scrape time)",
    ['provider'],
    providerStates,
    ({ provider, circuitOpen }) => [{ provider }, circuitOpen ? 1 : 0],
  );
  scrapedGauge(
    'provider_unsettled_orders',
    'Top-up orders sent to a provider and not yet settled (sending, pending or unknown), read at scrape time',
    ['provider'],
    providerStates,
    ({ provider, unsettled }) => [{ provider }, unsettled],
  );
  const yielding = new Gauge({
    name: 'fulfilment_yielding',
    help: '1 while card fulfilment yields to the busy API process beside it: one batch transaction at a time, batches gathering for a moment',
    registers,
  });
  const retention = new Counter({ name: 'retention_deleted_rows_total', help: 'Rows deleted by retention (C23), by table', labelNames: ['table'], registers });
  const initiate = oncePerScrape(sources.initiate);
  scrapedGauge(
    'orders_initiate',
    'Orders in initiate (accepted, not yet moved on) that no operator holds and no provider is settling, read at scrape time',
    ['kind'],
    initiate,
    ({ kind, count }) => [{ kind }, count],
  );
  scrapedGauge(
    'orders_initiate_oldest_seconds',
    'Age of the oldest order in initiate that no operator holds and no provider is settling (0: none), read at scrape time',
    ['kind'],
    initiate,
    ({ kind, oldestSeconds }) => [{ kind }, oldestSeconds],
  );
  scrapedGauge('queue_jobs', 'Jobs per queue and state, read at scrape time', ['queue', 'state'], oncePerScrape(sources.queueJobs), ({ queue, state, count }) => [
    { queue, state },
    count,
  ]);
  scrapedGauge(
    'card_codes_available',
    'Unassigned card codes per card service, read at scrape time',
    ['card_service_id'],
    oncePerScrape(sources.codesAvailable),
    ({ cardServiceId, count }) => [{ card_service_id: cardServiceId }, count],
  );
  return {
    contentType: own.contentType,
    render: async () => {
      for (const forget of scrapeReads) forget();
      const mine = peers.length === 0 ? own : AggregatorRegistry.aggregate<PrometheusContentType>([await own.getMetricsAsJSON(), ...(await Promise.all(peers.map(bounded)))]);
      return Registry.merge([mine, scraped]).metrics();
    },
    ownSeries: () => own.getMetricsAsJSON(),
    addPeer: (read) => void peers.push(read),
    requestServed: (labels, seconds) => {
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    orderPlaced: (kind, mode) => placed.inc({ kind, mode }),
    orderStatusChanged: (kind, status, mode) => changes.inc({ kind, status, mode }),
    orderPageServed: (from) => orderPages.inc({ from }),
    jobRan: (queue, seconds) => jobDuration.observe({ queue }, seconds),
    jobFailed: (queue) => jobFailures.inc({ queue }),
    webhookDelivered: (outcome) => webhooks.inc({ outcome }),
    rateLimitFellBack: () => limiterFallbacks.inc(),
    providerRequest: (provider, request, outcome, seconds) => {
      providerRequests.inc({ provider, request, outcome });
      providerLatency.observe({ provider }, seconds);
    },
    retentionDeleted: (table, rows) => retention.inc({ table }, rows),
    fulfilmentYielding: (on) => yielding.set(on ? 1 : 0),
  };
}
