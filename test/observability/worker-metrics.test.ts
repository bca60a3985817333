import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_STATUS } from '../../src/modules/order-state/state.js';
import { cliEnvOf } from '../helpers/cli.js';
import { createCardService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { freePort, runEntry, TEST_METRICS_TOKEN, waitForHttp, type Run } from '../helpers/processes.js';
import { createBuyer, placeCardOrder, stockCodes, waitFor, waitForStatus } from '../workers/support.js';

let app: TestApp;
let worker: Run;
let metricsUrl: string;
beforeAll(async () => {
  // The API in this process runs no workers: the worker-only process below fulfils the orders.
  app = await startTestApp();
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  worker = runEntry('workers/main.ts', cliEnvOf(app, { WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' }));
  await waitForHttp(metricsUrl, worker, undefined, scraper);
});

/** Prometheus' `authorization` setting: the same METRICS_TOKEN as on the API port. */
const scraper = { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` } };
afterAll(async () => {
  await worker?.stop();
  await app?.close();
});

describe('metrics of a worker-only process (WORKER_METRICS_PORT)', () => {
  it('shows the jobs it ran and the status changes it made', async () => {
    const buyer = await createBuyer(app);
    const service = await createCardService(app.services.db, '2.00');
    await stockCodes(app, service.serviceId, 1);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 1]]);
    await waitForStatus(app, utr, ORDER_STATUS.completed);
    const text = await waitFor('the worker to count the job', async () => {
      const body = await (await fetch(metricsUrl, scraper)).text();
      return /^job_duration_seconds_count\{queue="order-fulfilment"\} [1-9]/m.test(body) && body;
    });
    expect(text).toMatch(/^order_status_changes_total\{kind="card",status="completed",mode="live"\} 1$/m);
    expect(text).toContain('# TYPE queue_jobs gauge');
    // The API process moved nothing: its own counters say so.
    expect(await app.scrape()).not.toMatch(/^order_status_changes_total\{/m);
  });

  it('serves nothing else', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/health'), scraper)).status).toBe(404);
    expect((await fetch(metricsUrl, { ...scraper, method: 'POST' })).status).toBe(404);
  });

  it('answers 401 without the metrics token, or with another one (C16)', async () => {
    for (const headers of [undefined, { Authorization: 'Bearer not-the-metrics-token' }, { Authorization: `Bearer ${app.adminToken}` }]) {
      const response = await fetch(metricsUrl, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await response.text()).toBe('');
    }
  });

  it('serves nothing at all while METRICS_TOKEN is unset', async () => {
    const port = await freePort();
    const tokenless = runEntry('workers/main.ts', cliEnvOf(app, { WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1', METRICS_TOKEN: '', LOG_LEVEL: 'info' }));
    try {
      await waitFor('the worker process to start', async () => tokenless.stderr().includes('workers started'));
      for (const headers of [undefined, scraper.headers]) expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers })).status).toBe(404);
    } finally {
      await tokenless.stop();
    }
  });
});
