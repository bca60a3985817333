import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withTimeout } from './deadline.js';

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
};

/** A webhook delivery attempt, by what came of it (`retrying`: it failed and another attempt is scheduled). */
export type WebhookOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

/** The series of DESIGN C16, recorded through typed functions; one registry per process. */
export type Metrics = {
  /** The Content-Type of `render()`. */
  contentType: string;
  /** Every series in the Prometheus text format. */
  render: () => Promise<string>;
  /** `route` is the route's pattern (`/admin/orders/:utr/refund`), never a raw path. */
  requestServed: (request: { method: string; route: string; status: number }, seconds: number) => void;
  orderPlaced: (kind: string) => void;
  orderStatusChanged: (kind: string, status: string) => void;
  /** One run of a job, whatever its outcome. */
  jobRan: (queue: string, seconds: number) => void;
  /** One failed attempt of a job (a retried job counts each time). */
  jobFailed: (queue: string) => void;
  webhookDelivered: (outcome: WebhookOutcome) => void;
};

/** Jobs run from milliseconds (card codes) to the top-up provider's 10 s timeout. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * A registry of its own (never prom-client's global one), so two services in one process, such as test
 * apps, count apart.
 */
export function createMetrics(sources: ScrapeSources, { scrapeTimeoutMs = 2000 } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const bounded = <T>(read: () => Promise<T>) => withTimeout(scrapeTimeoutMs, read()).catch(() => [] as T);

  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route', 'status'],
    registers,
  });
  const placed = new Counter({ name: 'orders_placed_total', help: 'Orders accepted (an idempotent replay is not counted again)', labelNames: ['kind'], registers });
  const changes = new Counter({
    name: 'order_status_changes_total',
    help: 'Order status changes, by the status moved to',
    labelNames: ['kind', 'status'],
    registers,
  });
  const jobDuration = new Histogram({ name: 'job_duration_seconds', help: 'Time a job run took', labelNames: ['queue'], buckets: JOB_BUCKETS, registers });
  const jobFailures = new Counter({ name: 'jobs_failed_total', help: 'Failed job attempts', labelNames: ['queue'], registers });
  const webhooks = new Counter({ name: 'webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome'], registers });
  // Alerts are outbox rows: counted from PostgreSQL, so every process (API or worker) shows the same total.
  const lowStock = () => bounded(sources.lowStock);
  new Counter({
    name: 'low_stock_alerts_total',
    help: 'stock.low alerts raised per card service (read at scrape time)',
    labelNames: ['card_service_id'],
    registers,
    async collect() {
      const rows = await lowStock();
      this.reset();
      for (const { cardServiceId, alerts } of rows) this.inc({ card_service_id: cardServiceId }, alerts);
    },
  });
  new Gauge({
    name: 'card_service_below_low_stock_threshold',
    help: '1 while a card service has fewer unassigned codes than its low_stock_threshold (read at scrape time)',
    labelNames: ['card_service_id'],
    registers,
    async collect() {
      const rows = await lowStock();
      this.reset();
      for (const { cardServiceId, below } of rows) this.set({ card_service_id: cardServiceId }, below ? 1 : 0);
    },
  });
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs per queue and state, read at scrape time',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      const rows = await bounded(sources.queueJobs);
      this.reset();
      for (const { queue, state, count } of rows) this.set({ queue, state }, count);
    },
  });
  new Gauge({
    name: 'card_codes_available',
    help: 'Unassigned card codes per card service, read at scrape time',
    labelNames: ['card_service_id'],
    registers,
    async collect() {
      const rows = await bounded(sources.codesAvailable);
      this.reset();
      for (const { cardServiceId, count } of rows) this.set({ card_service_id: cardServiceId }, count);
    },
  });

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    requestServed: (labels, seconds) => {
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    orderPlaced: (kind) => placed.inc({ kind }),
    orderStatusChanged: (kind, status) => changes.inc({ kind, status }),
    jobRan: (queue, seconds) => jobDuration.observe({ queue }, seconds),
    jobFailed: (queue) => jobFailures.inc({ queue }),
    webhookDelivered: (outcome) => webhooks.inc({ outcome }),
  };
}
