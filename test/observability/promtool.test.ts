/**
 * The monitoring pack checked by Prometheus' own promtool (Debian's `prometheus` package): the alert rules load and pass
 * their unit tests, and every query of the Grafana dashboard parses. In the tools suite (`npm run test:tools`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { command } from '../helpers/system.js';
import { toolCommand } from '../helpers/tools.js';
import { ALERT_TESTS, ALERTS, asPromQL, dashboard, dashboardExprs, variableSelectors } from './monitoring-pack.js';

/** Runs promtool (the tools suite stops before any test, naming the package, on a machine without it). */
const promtool = (...args: string[]): Promise<string> => command(toolCommand('promtool'), args);

describe('the alert rules (deploy/alerts.yaml)', () => {
  it('load in Prometheus', async () => {
    expect(await promtool('check', 'rules', ALERTS)).toContain('SUCCESS');
  });

  it('pass their unit tests (deploy/alerts.test.yaml)', async () => {
    expect(await promtool('test', 'rules', ALERT_TESTS)).toContain('SUCCESS');
  });
});

describe('the Grafana dashboard (deploy/grafana-dashboard.json)', () => {
  it('asks only what PromQL can parse', async () => {
    const board = await dashboard();
    const exprs = [...dashboardExprs(board), ...variableSelectors(board)];
    // promtool parses expressions as recording rules.
    const rules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr: asPromQL(expr) })) }] };
    const dir = await mkdtemp(join(tmpdir(), 'dashboard-'));
    try {
      await writeFile(join(dir, 'queries.yaml'), stringify(rules));
      expect(await promtool('check', 'rules', join(dir, 'queries.yaml'))).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
