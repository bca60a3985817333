import { randomBytes } from 'node:crypto';
import type { Sql } from 'postgres';
import type { Db } from '../../src/db/client.js';
import { findOrder, fromDatabase, listOrders, type OrderReader } from '../../src/modules/orders/listing.js';
import { newUtr, placeOrder, requestDigest } from '../../src/modules/orders/service.js';
import { closedLoop } from './load.js';

/**
 * `npm run bench -- --partitioning [--orders N]`: `orders`, `order_lines` and `balance_ledger` as they are, against
 * the same three tables partitioned by month, at N orders (10,000,000 by default), with the service's own placement
 * and order-list functions on both. The partitioned copies live in the schema `monthly` of the same database, with
 * the same columns, checks and indexes; a connection whose search_path starts with `monthly` runs every statement of
 * the service on them unchanged. What partitioning forces on the tables is built as it would have to be: every primary
 * key and unique index gains `created_at`, so no index keeps a `utr` unique across the table, nor a ledger's one
 * `order_debit` per order; a line refers to its order by (order_id, created_at). The ledger, partitioned by its own
 * time, has no foreign key to its order (a refund is written in a later month than its order): one check fewer per
 * placement than the tables as they are. Its indexes are built after the copy, the others' during the load.
 */

export const MONTHLY = 'monthly';

/** The accounts the orders are spread over (each one's history is N / PARTITIONING_ACCOUNTS orders deep). */
export const PARTITIONING_ACCOUNTS = 2_000;
/** Every twentieth order was refunded a minute after it was placed. */
const REFUNDED_EVERY = 20;
/** The history spans a year: the orders' times, evenly spaced. */
const SPAN = `interval '365 days'`;

export type PartitioningData = { accountIds: number[]; serviceIds: number[]; orders: number };

/**
 * N card orders of one line each over PARTITIONING_ACCOUNTS accounts and `serviceIds`, with each order's debit and every twentieth
 * order's refund in the ledger, written to the tables as they are and then copied to their monthly partitioned twins.
 */
export async function loadPartitioningData(sql: Sql, data: PartitioningData, step: (text: string) => void): Promise<void> {
  const { accountIds, serviceIds, orders: n } = data;
  step(`orders: ${n.toLocaleString('en')} over ${accountIds.length} accounts`);
  await sql`
    insert into orders (utr, account_id, kind, status, total, currency, currency_symbol, created_at, updated_at, completed_at)
    select 'C' || lpad(i::text, 9, '0') || upper(left(md5(i::text), 16)), (${accountIds}::int[])[1 + i % ${accountIds.length}], 'card', 1, 10,
      'USD', '$', t, t, t
    from generate_series(1, ${n}::int) i, lateral (select now() - (${n}::int - i) * (${sql.unsafe(SPAN)} / ${n}::int) as t) at`;
  step('order lines');
  await sql`
    insert into order_lines (order_id, card_service_id, card_id, quantity, base_price, discount, unit_price, line_total, created_at)
    select o.id, s.id, s.card_id, 1, 10, 0, 10, 10, o.created_at
    from orders o join card_services s on s.id = (${serviceIds}::int[])[1 + o.id % ${serviceIds.length}]`;
  step('ledger: a debit for each order, a refund for every twentieth');
  await sql`
    insert into balance_ledger (account_id, amount, balance_after, kind, currency, order_id, created_at)
    select o.account_id, -10, 1000, 'order_debit', 'USD', o.id, o.created_at from orders o
    union all
    select o.account_id, 10, 1010, 'order_refund', 'USD', o.id, o.created_at + interval '1 minute' from orders o where o.id % ${REFUNDED_EVERY} = 0`;
  step('the monthly partitioned copies');
  await createMonthlyTables(sql);
  for (const table of ['orders', 'order_lines', 'balance_ledger']) {
    await sql.unsafe(`insert into ${MONTHLY}.${table} select * from public.${table}`);
    await sql.unsafe(`select setval('${MONTHLY}.${table}_id_seq', (select max(id) from public.${table}))`);
  }
  await addMonthlyKeys(sql);
  step('vacuum analyze');
  for (const table of ['orders', 'order_lines', 'balance_ledger']) {
    await sql.unsafe(`vacuum analyze public.${table}`);
    await sql.unsafe(`vacuum analyze ${MONTHLY}.${table}`);
  }
}

/**
 * The three tables partitioned by month of `created_at`, a partition for each month from 13 months ago to two months
 * ahead: columns, defaults and checks as the service's (an id sequence of their own where the service's tables have
 * an identity, which a partitioned table of PostgreSQL 15 cannot have).
 */
async function createMonthlyTables(sql: Sql): Promise<void> {
  await sql.unsafe(`create schema ${MONTHLY}`);
  for (const table of ['orders', 'order_lines', 'balance_ledger']) {
    await sql.unsafe(`
      create sequence ${MONTHLY}.${table}_id_seq;
      create table ${MONTHLY}.${table} (like public.${table} including defaults including constraints) partition by range (created_at);
      alter table ${MONTHLY}.${table} alter column id set default nextval('${MONTHLY}.${table}_id_seq');
      do $$ declare m date;
      begin
        for m in select generate_series(date_trunc('month', now() - interval '13 months'), date_trunc('month', now() + interval '2 months'), interval '1 month')::date loop
          execute format('create table ${MONTHLY}.%I partition of ${MONTHLY}.${table} for values from (%L) to (%L)',
            '${table}_' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
        end loop;
      end $$`);
  }
}

/** The service's keys and indexes on the monthly tables, each key with the partition key added. */
async function addMonthlyKeys(sql: Sql): Promise<void> {
  await sql.unsafe(`
    alter table ${MONTHLY}.orders add primary key (id, created_at);
    create unique index on ${MONTHLY}.orders (utr, created_at);
    create index on ${MONTHLY}.orders (account_id, livemode, kind, created_at desc, id desc);
    create index on ${MONTHLY}.orders (account_id, top_up_id);
    create index on ${MONTHLY}.orders (status, created_at, id);
    create index on ${MONTHLY}.orders (created_at, id) where status = 0 and awaiting_operator_since is null;
    alter table ${MONTHLY}.orders add foreign key (account_id) references public.accounts (id);
    alter table ${MONTHLY}.order_lines add primary key (id, created_at);
    create index on ${MONTHLY}.order_lines (order_id);
    create index on ${MONTHLY}.order_lines (card_service_id, order_id) where codes_owed > 0;
    create index on ${MONTHLY}.order_lines (card_service_id, order_id) where codes_owed > 0 and waiting;
    alter table ${MONTHLY}.order_lines add foreign key (order_id, created_at) references ${MONTHLY}.orders (id, created_at);
    alter table ${MONTHLY}.order_lines add foreign key (card_service_id) references public.card_services (id);
    alter table ${MONTHLY}.order_lines add foreign key (card_id) references public.cards (id);
    alter table ${MONTHLY}.balance_ledger add primary key (id, created_at);
    create index on ${MONTHLY}.balance_ledger (account_id, livemode, id);
    create unique index on ${MONTHLY}.balance_ledger (order_id, kind, created_at) where order_id is not null;
    alter table ${MONTHLY}.balance_ledger add foreign key (account_id) references public.accounts (id);`);
}

/** The bytes of each layout's three tables with their indexes. */
export async function layoutSizes(sql: Sql): Promise<{ plain: number; monthly: number }> {
  const [row] = await sql<{ plain: string; monthly: string }[]>`
    select
      (select sum(pg_total_relation_size(c.oid)) from pg_class c join pg_namespace s on s.oid = c.relnamespace
        where s.nspname = 'public' and c.relname in ('orders', 'order_lines', 'balance_ledger'))::text as plain,
      (select sum(pg_total_relation_size(c.oid)) from pg_class c join pg_namespace s on s.oid = c.relnamespace
        where s.nspname = ${MONTHLY} and c.relkind = 'r')::text as monthly`;
  return { plain: Number(row!.plain), monthly: Number(row!.monthly) };
}

/** What each layout is asked, by the service's own functions. */
export type Operation = { name: string; what: string; run: (db: Db) => Promise<unknown> };

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/**
 * The operations compared: a card order placed (its order, line, debit and Idempotency-Key in one statement), an
 * account's first page of orders, a page deep in its history by cursor, and one order by its utr (C18).
 */
export async function partitioningOperations(sql: Sql, data: PartitioningData): Promise<Operation[]> {
  // Orders picked from every month, each with its account: the deep pages start after them, the lookups find them.
  const picked = await sql<{ utr: string; account_id: number }[]>`
    select utr, account_id from orders where id % ${Math.max(1, Math.floor(data.orders / 5_000))} = 0 limit 5000`;
  const reader = (accountId: number): OrderReader => ({ caller: { id: accountId, livemode: true }, assetBase: 'http://127.0.0.1', openCode: (sealed) => sealed.toString('hex') });
  return [
    {
      name: 'place',
      what: 'a card order placed (order, line, debit, Idempotency-Key: one statement)',
      run: (db) => {
        const request = { service_ids: [pick(data.serviceIds)], quantities: [1] };
        return placeOrder(db, {
          accountId: pick(data.accountIds),
          kind: 'card',
          utr: newUtr('card'),
          topUpId: null,
          informations: null,
          fields: null,
          lines: [{ serviceId: request.service_ids[0]!, quantity: 1 }],
          idempotency: { key: randomBytes(12).toString('hex'), endpoint: 'card/make-order', digest: requestDigest('card/make-order', request) },
          maxPrice: null,
        });
      },
    },
    {
      name: 'list.first-page',
      what: "an account's first page of card orders (10, newest first)",
      run: (db) => listOrders(fromDatabase(db), reader(pick(data.accountIds)), 'card', { page: 1, perPage: 10 }),
    },
    {
      name: 'list.deep-by-cursor',
      what: 'the page after an order anywhere in the history (next_page_url)',
      run: (db) => {
        const order = pick(picked);
        return listOrders(fromDatabase(db), reader(order.account_id), 'card', { page: 2, perPage: 10, after: order.utr });
      },
    },
    {
      name: 'order-by-utr',
      what: 'one order by its utr (get-card/order)',
      run: (db) => {
        const order = pick(picked);
        return findOrder(db, reader(order.account_id), order.utr);
      },
    },
  ];
}

export type Driven = { calls: number; seconds: number; latencies: number[] };

/** `run` called by `concurrency` callers back to back for `seconds` (closedLoop); a failed call ends the bench. */
export async function drive(run: () => Promise<unknown>, seconds: number, concurrency: number): Promise<Driven> {
  const { latencies, failures, elapsedMs, firstError } = await closedLoop(concurrency, { seconds }, async () => void (await run()));
  if (failures > 0) throw firstError;
  return { calls: latencies.length, seconds: elapsedMs / 1000, latencies };
}

/** Two drives summed (turns A, B, B, A: each layout gets the machine's noise of both halves). */
export const merged = (a: Driven, b: Driven): Driven => ({ calls: a.calls + b.calls, seconds: a.seconds + b.seconds, latencies: [...a.latencies, ...b.latencies] });
