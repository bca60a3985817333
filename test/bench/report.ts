import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Figures, Measured } from './load.js';

/** One line of results/latest.json. `ceiling` names the entry `ratio` divides by (rps / ceiling rps). */
export type Row = Figures & { name: string; ceiling: string | null; ratio: number | null };

/** The cached reads the `prices.` and `access.` rows measure (run.ts). */
export const TURN_READS = ['top-up-list', 'card-services'] as const;

/**
 * The targets of a family of rows measured in turns (run.ts compareInTurns): its base rows (`<family>.placement.card.
 * <placementBase>`, `<family>.read.<name>.<readBase>`) are figures, the rest at least `min`× their base with no errors.
 */
function comparedInTurns(family: string, placementBase: string, min: number, readBase = placementBase): Target[] {
  return [
    { prefix: `${family}.placement.card.${placementBase}`, check: null, text: '' },
    ...TURN_READS.map((name) => ({ prefix: `${family}.read.${name}.${readBase}`, check: null, text: '' })),
    { prefix: `${family}.`, check: (r) => (r.ratio ?? 0) >= min && r.errors === 0, text: `≥${min}× ${placementBase === readBase ? placementBase : `${placementBase}/${readBase}`}, 0 err` },
  ];
}

/** `exact`: the prefix is the row's whole name. */
type Target = { prefix: string; exact?: boolean; check: ((r: Row, base: Row | undefined, rows: Row[]) => boolean) | null; text: string };

/**
 * The targets each scenario is judged against (the first entry whose prefix matches; `check: null` is a figure
 * without a target). `base` is the row the ratio divides by.
 */
const TARGETS: Target[] = [
  // Informational: what webhooks and a second API process change, next to the figures without.
  { prefix: 'placement.card.webhooks', check: null, text: '' },
  { prefix: 'e2e.card.webhooks', check: null, text: '' },
  // Delivery keeps up with the completions it follows, and a slow endpoint leaves the others' latency as it was.
  {
    prefix: 'webhooks.delivered.slow-endpoint',
    check: (r, base) => r.p99_ms <= (base?.p99_ms ?? 0) * 1.2 && r.errors === 0,
    text: 'others p99 ≤ 1.2× webhooks.delivered',
  },
  {
    prefix: 'webhooks.delivered',
    check: (r) => (r.ratio ?? 0) >= 1 && r.p50_ms <= 1000 && r.p99_ms <= 5000 && r.errors === 0,
    text: '≥1.0× completions, p50 ≤ 1 s, p99 ≤ 5 s',
  },
  { prefix: 'scale.', check: null, text: '' },
  // Queues over a 3-master cluster against one Redis, the same load in turns: what spreading the queues costs an order
  // (on this box, the cluster client's CPU and the cluster's processes on the same two cores; the masters' share of
  // the queue traffic is the topology suite's).
  { prefix: 'shards.placement.card.one-redis', check: null, text: '' },
  { prefix: 'shards.e2e.card.one-redis', check: null, text: '' },
  { prefix: 'shards.', check: (r) => (r.ratio ?? 0) >= 0.9 && r.errors === 0, text: '≥0.9× one Redis, 0 err' },
  // C24: a tiered account's reads and a converted account's orders, each against the plain account's in the same run.
  ...comparedInTurns('prices', 'plain', 0.9),
  // C26: orders from allow-listed accounts, reads with their read-scope keys' tokens, against accounts without a list.
  ...comparedInTurns('access', 'open', 0.95, 'full'),
  // Placement first: yielding costs placement nothing and keeps its tail shorter than not yielding, while fulfilment
  // still completes orders at ≥ 0.8× the rate it does without yielding.
  { prefix: 'placement-first.placement.card.off', check: null, text: '' },
  { prefix: 'placement-first.e2e.card.off', check: null, text: '' },
  {
    prefix: 'placement-first.placement.card.on',
    check: (r, base) => (r.ratio ?? 0) >= 0.95 && r.p99_ms <= (base?.p99_ms ?? 0) && r.errors === 0,
    text: '≥0.95× off, p99 ≤ off, 0 err',
  },
  { prefix: 'placement-first.e2e.card.on', check: (r) => (r.ratio ?? 0) >= 0.8 && r.errors === 0, text: '≥0.8× off, 0 err' },
  { prefix: 'placement.hot-account', check: (r) => (r.ratio ?? 0) >= 2 && r.errors === 0, text: '≥2×, 0 err' },
  // Placement first: beside the worker process fulfilling what it places, within 1.5× of the p99 with the workers off.
  {
    prefix: 'placement.card',
    exact: true,
    check: (r, _base, rows) => {
      const alone = rows.find((row) => row.name === 'placement.card.api-only');
      return (r.ratio ?? 0) >= 0.7 && r.p99_ms <= 1.5 * (alone?.p99_ms ?? 0) && r.errors === 0;
    },
    text: '≥0.7×, p99 ≤ 1.5× placement.card.api-only, 0 err',
  },
  {
    prefix: 'placement.',
    check: (r, base) => (r.ratio ?? 0) >= 0.7 && r.p99_ms <= (base?.p99_ms ?? 0) && r.errors === 0,
    text: "≥0.7×, p99 ≤ the ceiling's, 0 err",
  },
  { prefix: 'e2e.', check: (r) => (r.ratio ?? 0) >= 0.6, text: '≥0.6×' },
  { prefix: 'fulfilment.', check: (r) => (r.ratio ?? 0) >= 0.6, text: '≥0.6×' },
  // Per-account parts (a top-up's details, the caller's orders with their codes) are held to a lower bar.
  { prefix: 'read.top-up-details', check: (r) => (r.ratio ?? 0) >= 0.25, text: '≥0.25×' },
  { prefix: 'read.card-orders', check: (r) => (r.ratio ?? 0) >= 0.25, text: '≥0.25×' },
  { prefix: 'read.', check: (r) => (r.ratio ?? 0) >= 0.5, text: '≥0.5×' },
  // Keyset paging: a deep page as next_page_url asks it costs what a first page does, ahead of the same page by number.
  { prefix: 'growth.read.card-orders.deep-by-number', check: null, text: '' },
  {
    prefix: 'growth.read.card-orders.deep-by-cursor',
    check: (r, _base, rows) => r.rps >= 0.9 * (rows.find((row) => row.name === 'growth.read.card-orders')?.rps ?? Number.POSITIVE_INFINITY) && r.errors === 0,
    text: '≥0.9× growth.read.card-orders (page 1)',
  },
  { prefix: 'growth.', check: (r) => (r.ratio ?? 0) >= 0.9, text: '≥0.9× small' },
];

export class Report {
  readonly rows: Row[] = [];
  private readonly notes = new Map<string, string>();

  add(name: string, figures: Measured, ceiling: string | null = null): Row {
    const base = ceiling ? this.rows.find((r) => r.name === ceiling) : undefined;
    const row: Row = {
      name,
      rps: round(figures.rps, 1),
      p50_ms: round(figures.p50_ms, 2),
      p99_ms: round(figures.p99_ms, 2),
      errors: figures.errors,
      ceiling,
      ratio: base && base.rps > 0 ? round(figures.rps / base.rps, 3) : null,
    };
    this.rows.push(row);
    if (figures.note) this.notes.set(name, figures.note);
    process.stdout.write(`  ${line(row)}\n${figures.note ? `      ${figures.note}\n` : ''}`);
    return row;
  }

  table(): string {
    const header = line({ name: 'scenario', rps: 'rps', p50_ms: 'p50 ms', p99_ms: 'p99 ms', errors: 'errors', ceiling: 'ceiling', ratio: 'ratio' });
    const rows = this.rows.map((r) => `${line(r)}  ${verdict(r, this.rows)}`);
    const notes = this.rows.filter((r) => this.notes.has(r.name)).map((r) => `  ${r.name.padEnd(28)} ${this.notes.get(r.name)}`);
    return [header, '-'.repeat(header.length + 24), ...rows, '', 'What each run leaned on:', ...notes].join('\n');
  }

  save(file: string): void {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(this.rows, null, 2)}\n`);
  }
}

function verdict(row: Row, rows: Row[]): string {
  const target = TARGETS.find((t) => (t.exact ? row.name === t.prefix : row.name.startsWith(t.prefix)));
  if (!target?.check) return '';
  return `${target.check(row, rows.find((b) => b.name === row.ceiling), rows) ? 'ok  ' : 'MISS'} (${target.text})`;
}

type Cells = { [K in keyof Row]: unknown };

function line(r: Cells): string {
  // A figure a scenario does not measure (NaN: a drained backlog has no meaningful latency) shows as '-'.
  const num = (v: unknown) => (v === null || Number.isNaN(v) ? '-' : String(v));
  return [
    String(r.name).padEnd(28),
    num(r.rps).padStart(9),
    num(r.p50_ms).padStart(9),
    num(r.p99_ms).padStart(9),
    num(r.errors).padStart(7),
    num(r.ceiling).padStart(26),
    num(r.ratio).padStart(7),
  ].join(' ');
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
