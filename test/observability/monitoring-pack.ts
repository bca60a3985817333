/** The monitoring pack in deploy/ as the tests read it: the alert rules, their unit tests and the Grafana dashboard. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
export const ALERTS = join(DEPLOY, 'alerts.yaml');
export const ALERT_TESTS = join(DEPLOY, 'alerts.test.yaml');
export const DASHBOARD = join(DEPLOY, 'grafana-dashboard.json');
export type Rule = { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
export type AlertTests = { tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }> };
type Target = { expr?: string };
type Panel = { type: string; title?: string; targets?: Target[]; panels?: Panel[]; datasource?: { uid?: string } };
export type Dashboard = { schemaVersion: number; panels: Panel[]; templating: { list: Array<{ name: string; type: string; query: unknown }> } };

export const alertRules = async (): Promise<Rule[]> =>
  (parse(await readFile(ALERTS, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules);

export const dashboard = async (): Promise<Dashboard> => JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;

/** Every panel but rows (layout only), including those folded into a collapsed row. */
export const queryPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => (panel.type === 'row' ? queryPanels(panel.panels ?? []) : [panel]));

export const dashboardExprs = (board: Dashboard): string[] => queryPanels(board.panels).flatMap((panel) => (panel.targets ?? []).flatMap((t) => (t.expr ? [t.expr] : [])));

/** The selectors of the dashboard's query variables (`label_values(<selector>, <label>)`). */
export const variableSelectors = (board: Dashboard): string[] =>
  board.templating.list.flatMap((variable) => {
    const match = variable.type === 'query' ? /^label_values\((.+),\s*\w+\)$/.exec(String(variable.query)) : null;
    return match ? [match[1]!] : [];
  });

/** Grafana's variables as Prometheus would see them once Grafana filled them in. */
export const asPromQL = (expr: string) =>
  expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replaceAll('$__range', '1h')
    .replace(/\$\w+/g, '.*');

/** Aggregations and keywords, which (unlike functions) may stand before something other than `(`. */
const PROMQL_WORDS = new Set([
  ...['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile'],
  ...['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'atan2', 'inf', 'nan'],
]);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, label names or strings. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1 ');
  // Not after a word character, `.` or `$` (durations, numbers, Grafana variables); not a function call.
  const names = [...bare.matchAll(/(?<![\w:.$])[a-zA-Z_:][\w:]*(?![\w:]|\s*\()/g)].map(([name]) => name);
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name.toLowerCase())))];
}
