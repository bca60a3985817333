import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMetrics } from '../../src/lib/metrics.js';
import { createTestAccount, expectJson, tokenFor } from '../helpers/api.js';
import { sql } from 'drizzle-orm';
import { createCard, createCardService, createOrder, createTopUp, createTopUpOrder } from '../helpers/fixtures.js';
import { initiateBacklog } from '../../src/modules/order-state/waiting.js';
import { noteStockLevels } from '../../src/modules/inventory/low-stock.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { TEST_METRICS_TOKEN } from '../helpers/processes.js';
import { createBuyer, placeCardOrder, placeTopUpOrder, stockCodes, waitFor, waitForStatus } from '../workers/support.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workers: true });
});
afterAll(() => app.close());

type Labels = Record<string, string>;
type Scrape = { text: string; value: (name: string, labels?: Labels) => number; has: (name: string, labels?: Labels) => boolean };

const seriesKey = (name: string, labels: Labels) =>
  `${name}{${Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;

/** Reads the Prometheus text format into `name{labels} → value`. */
function parse(text: string): Scrape {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!]));
    series.set(seriesKey(match[1]!, labels), Number(match[3]));
  }
  return {
    text,
    value: (name, labels = {}) => series.get(seriesKey(name, labels)) ?? 0,
    has: (name, labels = {}) => series.has(seriesKey(name, labels)),
  };
}

async function scrape(): Promise<Scrape> {
  // As Prometheus scrapes it, with its `authorization` setting (C16).
  const response = await app.request('/metrics', { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(text);
}

const admin = (path: string, body: unknown) =>
  app.request(path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const FULFILMENT = { queue: 'order-fulfilment' };

describe('GET /metrics', () => {
  it('counts the orders placed, their status changes, the requests and the jobs that moved them', async () => {
    const card = await createCard(app.services.db);
    const cardServiceId = card.services[0]!.id;
    await stockCodes(app, cardServiceId, 3);
    const topUp = await createTopUp(app.services.db);
    const buyer = await createBuyer(app);
    const before = await scrape();

    const cardUtr = await placeCardOrder(buyer, [[cardServiceId, 2]]);
    await waitForStatus(app, cardUtr, 1);
    // The manual provider leaves the top-up to an operator, who completes it.
    const topUpUtr = await placeTopUpOrder(buyer, topUp);
    await waitFor('the top-up to wait for an operator', async () =>
      (await app.services.db.query.orders.findFirst({ where: (o, { eq }) => eq(o.utr, topUpUtr) }))?.awaitingOperatorSince,
    );
    await expectJson(await admin(`/admin/orders/${topUpUtr}/complete`, { note: 'sent in game' }), 200);
    // A job is measured once its handler returned, just after the order moved.
    const after = await waitFor('both jobs to be measured', async () => {
      const now = await scrape();
      return now.value('job_duration_seconds_count', FULFILMENT) - before.value('job_duration_seconds_count', FULFILMENT) === 2 && now;
    });
    const delta = (name: string, labels: Labels) => after.value(name, labels) - before.value(name, labels);

    expect(delta('orders_placed_total', { kind: 'card', mode: 'live' })).toBe(1);
    expect(delta('orders_placed_total', { kind: 'top_up', mode: 'live' })).toBe(1);
    expect(delta('order_status_changes_total', { kind: 'card', status: 'completed', mode: 'live' })).toBe(1);
    expect(delta('order_status_changes_total', { kind: 'top_up', status: 'completed', mode: 'live' })).toBe(1);
    expect(delta('order_status_changes_total', { kind: 'card', status: 'stock_short', mode: 'live' })).toBe(0);

    const placed = { method: 'POST', route: '/api/card/make-order', status: '200' };
    expect(delta('http_requests_total', placed)).toBe(1);
    expect(delta('http_request_duration_seconds_count', placed)).toBe(1);
    expect(after.value('http_request_duration_seconds_bucket', { ...placed, le: '+Inf' })).toBe(after.value('http_requests_total', placed));
    // The route's pattern, never the order number in the path.
    expect(delta('http_requests_total', { method: 'POST', route: '/admin/orders/:utr/complete', status: '200' })).toBe(1);
    expect(after.text).not.toContain(topUpUtr);

    expect(after.value('card_codes_available', { card_service_id: String(cardServiceId) })).toBe(1);
    for (const state of ['waiting', 'active', 'delayed', 'failed']) {
      expect(after.has('queue_jobs', { ...FULFILMENT, state }), state).toBe(true);
      expect(after.has('queue_jobs', { queue: 'card-restock', state }), state).toBe(true);
    }
    expect(after.value('queue_jobs', { ...FULFILMENT, state: 'waiting' })).toBe(0);
    // Process metrics.
    expect(after.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(after.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('shows the heap a process keeps after a major collection: up with what it holds, down once let go', async () => {
    // A major collection on demand: the flag exposes gc() to contexts created after it is set.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapAfterGc = async () => {
      gc();
      // The observer hears of the collection once its entries are delivered, after this tick.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return (await scrape()).value('nodejs_heap_used_after_major_gc_bytes');
    };
    const before = await heapAfterGc();
    expect(before).toBeGreaterThan(0);
    // 64 MiB kept in arrays of 131,072 doubles: the live heap grows by that much and stays grown across collections.
    const held = Array.from({ length: 64 }, (_, i) => new Array<number>(1 << 17).fill(i + 0.5));
    const holding = await heapAfterGc();
    expect(holding - before).toBeGreaterThan(48 * 2 ** 20);
    expect(await heapAfterGc()).toBeGreaterThan(before + 48 * 2 ** 20);
    held.length = 0;
    expect(await heapAfterGc()).toBeLessThan(holding - 48 * 2 ** 20);
  });

  it('shows a sold-out card service at 0 available codes', async () => {
    const card = await createCard(app.services.db);
    const service = { card_service_id: String(card.services[0]!.id) };
    const now = await scrape();
    expect(now.has('card_codes_available', service)).toBe(true);
    expect(now.value('card_codes_available', service)).toBe(0);
  });

  it('counts every failed attempt of a job', async () => {
    const before = await scrape();
    // A payload the queue's schema refuses fails at once, without retries.
    await app.services.queues.fulfilment.add('fulfil', { orderId: 0, utr: '' });
    const after = await waitFor('the failure to be counted', async () => {
      const now = await scrape();
      return now.value('jobs_failed_total', FULFILMENT) > before.value('jobs_failed_total', FULFILMENT) && now;
    });
    expect(after.value('jobs_failed_total', FULFILMENT) - before.value('jobs_failed_total', FULFILMENT)).toBe(1);
  });

  it('counts webhook deliveries through their recorder', async () => {
    const before = await scrape();
    expect(before.text).toContain('# TYPE webhook_deliveries_total counter');
    app.services.metrics.webhookDelivered('delivered');
    app.services.metrics.webhookDelivered('retrying');
    const after = await scrape();
    expect(after.value('webhook_deliveries_total', { outcome: 'delivered' }) - before.value('webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(after.value('webhook_deliveries_total', { outcome: 'retrying' }) - before.value('webhook_deliveries_total', { outcome: 'retrying' })).toBe(1);
  });

  it('shows a card service below its low-stock threshold and the alerts it raised', async () => {
    const { serviceId } = await createCardService(app.services.db, '1.00');
    const labels = { card_service_id: String(serviceId) };
    await stockCodes(app, serviceId, 2);
    expect((await scrape()).value('low_stock_alerts_total', labels)).toBe(0);
    await app.services.sql`update card_services set low_stock_threshold = 5 where id = ${serviceId}`;
    // Raises the alert, unless the workers' stock-keeping timer has just done so: once per crossing either way.
    await noteStockLevels(app.services.db, [serviceId]);
    const after = await scrape();
    expect(after.value('low_stock_alerts_total', labels)).toBe(1);
    expect(after.value('card_service_below_low_stock_threshold', labels)).toBe(1);
  });

  it('reads the orders stuck in initiate per kind, leaving out those an operator holds or a provider is settling', async () => {
    const { id: accountId } = await createTestAccount(app);
    const { serviceId, cardId } = await createCardService(app.services.db);
    let backlog: Awaited<ReturnType<typeof initiateBacklog>> = [];
    // Read inside a transaction that is then rolled back: this app's workers would otherwise move the orders on.
    const rolledBack = new Error('rolled back');
    await app.services.db
      .transaction(async (tx) => {
        const waiting = await createOrder(tx, { accountId, cardId, serviceId });
        await createOrder(tx, { accountId, cardId, serviceId });
        const held = await createOrder(tx, { accountId, cardId, serviceId });
        await tx.execute(sql`update orders set created_at = now() - interval '10 minutes' where id = ${waiting.id}`);
        await tx.execute(sql`update orders set created_at = now() - interval '1 hour', awaiting_operator_since = now() where id = ${held.id}`);
        const settling = await createTopUpOrder(tx, { accountId });
        await tx.execute(sql`update orders set created_at = now() - interval '2 hours' where id = ${settling.id}`);
        const [provider] = await tx.execute<{ id: number }>(sql`
          insert into providers (name, kind, base_url, credentials_sealed) values ('Slow', 'http', 'http://127.0.0.1:9', '\\x00') returning id`);
        await tx.execute(sql`
          insert into provider_attempts (order_id, provider_id, product_code, outcome) values (${settling.id}, ${provider!.id}, 'X', 'pending')`);
        backlog = await initiateBacklog(tx);
        throw rolledBack;
      })
      .catch((err: unknown) => {
        if (err !== rolledBack) throw err;
      });
    const card = backlog.find((row) => row.kind === 'card')!;
    expect(card.count).toBeGreaterThanOrEqual(2);
    expect(card.oldestSeconds).toBeGreaterThanOrEqual(600);
    expect(card.oldestSeconds).toBeLessThan(3600);
    expect(backlog.map((row) => row.kind).sort()).toEqual(['card', 'top_up']);
    expect(backlog.find((row) => row.kind === 'top_up')!.oldestSeconds).toBeLessThan(3600);
  });

  it('is documented as a text/plain operation behind the metrics token', async () => {
    const doc = await expectJson(await app.request('/openapi.json'), 200);
    const operation = doc.paths['/metrics'].get;
    expect(operation.tags).toEqual(['Operations']);
    expect(operation.security).toEqual([{ metricsToken: [] }]);
    expect(doc.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/plain']);
    expect(Object.keys(operation.responses)).toContain('401');
  });
});

describe('who may read the metrics (C16)', () => {
  it('answers 401 in the envelope without the metrics token, or with any other token', async () => {
    const keys = await createTestAccount(app);
    const token = await tokenFor(app, keys);
    for (const authorization of [undefined, 'Bearer wrong-metrics-token', `Bearer ${app.adminToken}`, `Bearer ${token}`, TEST_METRICS_TOKEN]) {
      const response = await app.request('/metrics', { headers: authorization ? { Authorization: authorization } : undefined });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await response.json()).toEqual({ status: 'failed', errors: 'Invalid metrics token.' });
    }
  });

  it('answers 404, as for an unknown path, while METRICS_TOKEN is unset', async () => {
    const tokenless = await startTestApp({ env: { METRICS_TOKEN: '' } });
    try {
      for (const [method, headers] of [['GET', undefined], ['GET', { Authorization: `Bearer ${TEST_METRICS_TOKEN}` }], ['POST', undefined]] as const) {
        const response = await tokenless.request('/metrics', { method, headers });
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ status: 'failed', errors: 'The requested endpoint does not exist.' });
      }
    } finally {
      await tokenless.close();
    }
  });
});

describe('labels and limits', () => {
  it('labels a request with its route pattern, and every unknown path with one label', async () => {
    const keys = await createTestAccount(app);
    const before = await scrape();
    await app.request('/admin/card-services/987654/stock', { headers: { Authorization: `Bearer ${app.adminToken}` } });
    await app.request('/no/such/path/55501');
    await app.request('/api/nothing-here-55502');
    // Interface B takes the api key in the query string: it never reaches a label.
    await app.request(`/license-api/account/details?api_key=${keys.apiKey}`);
    const after = await scrape();
    const delta = (labels: Labels) => after.value('http_requests_total', labels) - before.value('http_requests_total', labels);

    expect(delta({ method: 'GET', route: '/admin/card-services/:id/stock', status: '404' })).toBe(1);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    expect(delta({ method: 'GET', route: '/license-api/account/details', status: '200' })).toBe(1);
    for (const raw of ['987654', '55501', '55502', keys.apiKey, 'api_key']) expect(after.text).not.toContain(raw);
  });

  it('leaves out the series of a read that fails or does not answer, instead of holding the scrape', async () => {
    const metrics = createMetrics(
      {
        queueJobs: () => new Promise(() => {}),
        codesAvailable: () => Promise.reject(new Error('PostgreSQL is down')),
        lowStock: () => new Promise(() => {}),
        providers: () => new Promise(() => {}),
        initiate: () => new Promise(() => {}),
      },
      { scrapeTimeoutMs: 200 },
    );
    const started = Date.now();
    const text = await metrics.render();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(text).toContain('# TYPE queue_jobs gauge');
    expect(text).not.toMatch(/^queue_jobs\{/m);
    expect(text).not.toMatch(/^card_codes_available\{/m);
    // The rest of the scrape is there.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
  });

  it('reads each source once per scrape, however many series it feeds', async () => {
    const reads = { queueJobs: 0, codesAvailable: 0, lowStock: 0, providers: 0, initiate: 0 };
    const metrics = createMetrics({
      queueJobs: async () => (reads.queueJobs++, []),
      codesAvailable: async () => (reads.codesAvailable++, []),
      lowStock: async () => (reads.lowStock++, [{ cardServiceId: 7, alerts: 2, below: true }]),
      providers: async () => (reads.providers++, [{ provider: 'acme', circuitOpen: true, unsettled: 3 }]),
      initiate: async () => (reads.initiate++, [{ kind: 'card', count: 4, oldestSeconds: 61.5 }]),
    });
    const text = await metrics.render();
    expect(text).toMatch(/^low_stock_alerts_total\{card_service_id="7"\} 2$/m);
    expect(text).toMatch(/^card_service_below_low_stock_threshold\{card_service_id="7"\} 1$/m);
    expect(text).toMatch(/^provider_circuit_open\{provider="acme"\} 1$/m);
    expect(text).toMatch(/^provider_unsettled_orders\{provider="acme"\} 3$/m);
    expect(text).toMatch(/^orders_initiate\{kind="card"\} 4$/m);
    expect(text).toMatch(/^orders_initiate_oldest_seconds\{kind="card"\} 61\.5$/m);
    expect(reads).toEqual({ queueJobs: 1, codesAvailable: 1, lowStock: 1, providers: 1, initiate: 1 });
    await metrics.render();
    expect(reads).toEqual({ queueJobs: 2, codesAvailable: 2, lowStock: 2, providers: 2, initiate: 2 });
  });
});
