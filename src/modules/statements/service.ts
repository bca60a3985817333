import type postgres from 'postgres';
import type { Sql } from '../../db/client.js';
import { isoMicros } from '../../lib/time.js';
import { pageOffset, type PageRequest } from '../../lib/paging.js';

/**
 * An account's statement (C24): its ledger, newest first, each entry with the balance after it and the currency it
 * moved. Money is the ledger's own decimal text ("12.50"), never a binary float.
 */
export type StatementEntry = {
  id: number;
  created_at: string;
  kind: 'deposit' | 'adjustment' | 'order_debit' | 'order_refund';
  amount: string;
  balance_after: string;
  currency: string;
  utr?: string;
  reason?: string;
};

/**
 * Which entries: from `from` on, up to `to`, either given as a day (`2026-11-01`: the whole UTC day, both ends
 * included) or an instant (`2026-11-01T12:00:00Z`); those of the live balance, or with `livemode: false` of the test
 * balance (C25: a test token's statement).
 */
export type StatementRange = { from?: string; to?: string; livemode?: boolean };

const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);

/** The entries of one account within the range, as a condition on `balance_ledger l`. */
function entriesOf(sql: Sql, accountId: number, { from, to, livemode = true }: StatementRange): postgres.PendingQuery<postgres.Row[]> {
  const start = from ? sql`and l.created_at >= ${isDay(from) ? `${from}T00:00:00Z` : from}::timestamptz` : sql``;
  const end = !to ? sql`` : isDay(to) ? sql`and l.created_at < ${`${to}T00:00:00Z`}::timestamptz + interval '1 day'` : sql`and l.created_at <= ${to}::timestamptz`;
  return sql`l.account_id = ${accountId} and l.livemode = ${livemode} ${start} ${end}`;
}

type EntryRow = { id: string; created_at: string; kind: StatementEntry['kind']; amount: string; balance_after: string; currency: string; utr: string | null; reason: string | null };

/**
 * The entries in the order of the account's balance: ids follow the account's row lock, so each entry's balance_after
 * is the one before it plus its amount (creation times are their transactions' start, which can cross).
 */
const entriesQuery = (sql: Sql, accountId: number, range: StatementRange, below = sql``, rest = sql``) => sql<EntryRow[]>`
  select l.id, l.created_at::text, l.kind, l.amount::text, l.balance_after::text, coalesce(l.currency, a.currency) as currency, o.utr, l.reason
  from balance_ledger l join accounts a on a.id = l.account_id left join orders o on o.id = l.order_id
  where ${entriesOf(sql, accountId, range)} ${below}
  order by l.id desc ${rest}`;

const entry = (row: EntryRow): StatementEntry => ({
  id: Number(row.id),
  created_at: isoMicros(row.created_at),
  kind: row.kind,
  amount: row.amount,
  balance_after: row.balance_after,
  currency: row.currency,
  ...(row.utr === null ? {} : { utr: row.utr }),
  ...(row.reason === null ? {} : { reason: row.reason }),
});

/** One page of an account's statement (C11), and how many entries the range holds. */
export async function statementPage(sql: Sql, accountId: number, range: StatementRange, page: PageRequest): Promise<{ entries: StatementEntry[]; total: number }> {
  const [rows, [counted]] = await Promise.all([
    entriesQuery(sql, accountId, range, sql``, sql`limit ${page.perPage} offset ${pageOffset(page)}`),
    sql<{ total: number }[]>`select count(*)::int as total from balance_ledger l where ${entriesOf(sql, accountId, range)}`,
  ]);
  return { entries: rows.map(entry), total: counted!.total };
}

/** A statement's rows read in batches of this many: an export holds one batch in memory, whatever its length. */
const EXPORT_BATCH = 1000;

/**
 * Every entry of the range, newest first, in batches: each batch is a query of its own starting below the last id of
 * the one before, so an export holds neither a connection nor a transaction while its client reads, and a year of a
 * busy account is never held whole.
 */
export async function* statementBatches(sql: Sql, accountId: number, range: StatementRange): AsyncIterable<StatementEntry[]> {
  let below: number | null = null;
  for (;;) {
    const after = below === null ? sql`` : sql`and l.id < ${below}`;
    const rows = await entriesQuery(sql, accountId, range, after, sql`limit ${EXPORT_BATCH}`);
    if (rows.length === 0) return;
    yield rows.map(entry);
    if (rows.length < EXPORT_BATCH) return;
    below = Number(rows.at(-1)!.id);
  }
}

const CSV_COLUMNS = ['id', 'created_at', 'kind', 'amount', 'balance_after', 'currency', 'utr', 'reason'] as const;

/**
 * A CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled, RFC 4180). Free text that a
 * spreadsheet would run as a formula (starting with =, +, -, @, a tab or a return) is prefixed with a quote mark.
 */
function csvField(value: string | number | undefined, freeText: boolean): string {
  if (value === undefined) return '';
  let text = String(value);
  if (freeText && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The statement as CSV text, a header line first, then a chunk per batch. */
export async function* statementCsv(batches: AsyncIterable<StatementEntry[]>): AsyncIterable<string> {
  yield `${CSV_COLUMNS.join(',')}\r\n`;
  for await (const entries of batches) {
    yield entries.map((e) => `${CSV_COLUMNS.map((column) => csvField(e[column], column === 'reason')).join(',')}\r\n`).join('');
  }
}
