/**
 * The monitoring pack in deploy/: the alert rules are complete and each tested, the Grafana dashboard is importable
 * JSON (promtool.test.ts has Prometheus load and parse them), and every series the dashboard and the rules read is one the service serves on
 * /metrics, scraped live while it takes orders, runs jobs, delivers webhooks, calls a top-up provider and prunes
 * expired rows.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTestAccount, expectJson, tokenFor } from '../helpers/api.js';
import { createCardService, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { waitFor } from '../helpers/system.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { ALERT_TESTS, alertRules, dashboard, dashboardExprs, metricNames, queryPanels, variableSelectors, type AlertTests } from './monitoring-pack.js';
import { createBuyer, placeCardOrder, placeTopUpOrder, stockCodes } from '../workers/support.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const SUPPLIER_SECRET = 'monitoring-supplier-secret-0123';

describe('the alert rules (deploy/alerts.yaml)', () => {
  it('each wait a while, carry a severity, and tell the operator what happened and what to do', async () => {
    const rules = await alertRules();
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description?.length ?? 0, rule.alert).toBeGreaterThan(80);
    }
  });

  it('are each tested firing, and tested quiet', async () => {
    const { tests } = parse(await readFile(ALERT_TESTS, 'utf8')) as AlertTests;
    const checks = tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const { alert } of await alertRules()) {
      const mine = checks.filter((check) => check.alertname === alert);
      expect(mine.some((check) => (check.exp_alerts ?? []).length > 0), `${alert} fires`).toBe(true);
      expect(mine.some((check) => (check.exp_alerts ?? []).length === 0), `${alert} stays quiet`).toBe(true);
    }
  });
});

describe('the Grafana dashboard (deploy/grafana-dashboard.json)', () => {
  it('is a dashboard over a ${datasource} variable whose every panel queries Prometheus', async () => {
    const board = await dashboard();
    expect(board.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(board.templating.list.find((variable) => variable.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const panels = queryPanels(board.panels);
    expect(panels.length).toBeGreaterThan(0);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect((panel.targets ?? []).some((target) => typeof target.expr === 'string' && target.expr.trim() !== ''), panel.title).toBe(true);
    }
  });

  it('filters every order series by a Mode variable, live by default (C25: test orders apart)', async () => {
    const board = await dashboard();
    expect(board.templating.list.find((variable) => variable.name === 'mode')).toMatchObject({ query: 'live,test', current: { value: ['live'] } });
    const orderExprs = dashboardExprs(board).filter((expr) => /orders_placed_total|order_status_changes_total/.test(expr));
    expect(orderExprs.length).toBeGreaterThan(0);
    for (const expr of orderExprs) expect(expr).toContain('mode=~"$mode"');
  });

});

describe('reading metric names out of PromQL', () => {
  it('keeps the series and leaves out functions, keywords, label names, durations and Grafana variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{job=~"$job",route!="unmatched"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNames('sum(rate(a_total{status=~"5.."}[5m] offset 1h)) / on (job) group_left (x) sum (b)')).toEqual(['a_total', 'b']);
    expect(metricNames('max by (queue) (queue_jobs) > 50 and max by (queue) (deriv(queue_jobs[10m])) > 0')).toEqual(['queue_jobs']);
    expect(metricNames('up == 0 or vector(0) > bool 1e3 unless time() - c:recorded:rate5m < Inf')).toEqual(['up', 'c:recorded:rate5m']);
  });
});

describe('the series the pack reads', () => {
  let app: TestApp;
  let supplier: HttpSupplier;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  const admin = (method: string, path: string, body: unknown) =>
    app.request(`/admin${path}`, {
      method,
      headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** The names of the samples in one scrape, taken as Prometheus takes it. */
  async function scrapedNames(): Promise<Set<string>> {
    const response = await app.request('/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return new Set(text.split('\n').flatMap((line) => /^([a-zA-Z_:][\w:]*)(?:\{.*\})? \S+/.exec(line)?.[1] ?? []));
  }

  beforeAll(async () => {
    supplier = await startHttpSupplier({ secret: SUPPLIER_SECRET });
    receiver = await startReceiver();
    // Retention runs every 200 ms instead of every 10 minutes.
    app = await startTestApp({ env: { METRICS_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' }, workers: true, workerOptions: { retention: { intervalMs: 200 } } });
    const buyer = await createBuyer(app);

    // A webhook endpoint: the card order's completion is delivered to it.
    const endpoint = await expectJson(await buyer.api.postJson('/api/webhooks', { url: receiver.url }), 200);
    receiver.trust(endpoint.message.secret);

    // A card service with a low-stock threshold, and an order for it.
    const card = await createCardService(app.services.db, '2.00');
    await stockCodes(app, card.serviceId, 2);
    await app.services.sql`update card_services set low_stock_threshold = 5 where id = ${card.serviceId}`;
    await placeCardOrder(buyer, [[card.serviceId, 1]]);

    // A top-up routed to a provider, which delivers it.
    const provider = await expectJson(
      await admin('POST', '/providers', { name: 'Upstream', kind: 'http', base_url: supplier.url, credentials: { secret: SUPPLIER_SECRET } }),
      200,
    );
    const topUp = await createTopUp(app.services.db);
    await expectJson(
      await admin('PUT', `/top-up-services/${topUp.services[0]!.id}/routes`, [{ provider_id: provider.message.id, product_code: 'GAME-86', cost: '4.00' }]),
      200,
    );
    await placeTopUpOrder(buyer, topUp);

    // A job the queue's schema refuses fails at once.
    await app.services.queues.fulfilment.add('fulfil', { orderId: 0, utr: '' });

    // A token that expired long ago, for retention to delete.
    const expired = await createTestAccount(app);
    await tokenFor(app, expired);
    await app.services.sql`update auth_tokens set expires_at = now() - interval '30 days' where account_id = ${expired.id}`;
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([supplier?.close(), receiver?.close()]);
  });

  it('are all on /metrics once the store has done some work', async () => {
    const board = await dashboard();
    const used = new Map<string, string>();
    for (const expr of [...dashboardExprs(board), ...variableSelectors(board)]) for (const name of metricNames(expr)) used.set(name, 'the dashboard');
    for (const rule of await alertRules()) for (const name of metricNames(rule.expr)) used.set(name, `alert ${rule.alert}`);
    // Prometheus' own series.
    used.delete('up');
    expect(used.size).toBeGreaterThan(20);

    // A histogram is there through its _bucket, _count and _sum series.
    const absent = (scraped: Set<string>) =>
      [...used.keys()].filter((name) => !['', '_bucket', '_count', '_sum'].some((suffix) => scraped.has(name + suffix)));
    // Jobs, webhook deliveries, provider calls and retention are counted shortly after the work above; past the
    // wait, the assertion names what is still missing.
    let missing: string[] = [];
    await waitFor('every series to be scraped', async () => (missing = absent(await scrapedNames())).length === 0).catch(() => {});
    expect(missing.map((name) => `${name} (read by ${used.get(name)})`)).toEqual([]);
  });
});
