import type { Db, Sql } from '../../src/db/client.js';
import { createAccount } from '../../src/modules/accounts/service.js';
import { createCardService } from '../helpers/fixtures.js';
import type { Config } from '../../src/core/env.js';
import { createServices } from '../../src/runtime/services.js';
import { storeGauges } from '../../src/startup/gauges.js';
import { startWorkers } from '../../workers/index.js';
import { planOf, walkPlan } from '../helpers/query-plans.js';

/**
 * The plans of the worker timers' queries and of a /metrics scrape at volume (C23): `loadVolume` fills a database
 * with orders (and their lines) and webhook deliveries (with their events and attempts), tokens and idempotency
 * keys, as years of operation leave them; `timerPlans` runs every timer of the worker processes once and one scrape
 * on it with every statement recorded, then EXPLAINs each statement as it was sent. A statement that reads a large
 * table by a sequential scan is one whose cost grows with the history instead of with the work to do.
 */

/** A table of at least this many rows (after ANALYZE) counts as large. */
const LARGE_TABLE_ROWS = 10_000;

export type StatementPlan = { statement: string; seqScans: string[]; indexes: string[] };

/** Card services the orders and codes are spread over. */
const CARD_SERVICES = 20;

/**
 * `n` orders with one line each, spread over years, over 20 card services; the codes they were given (one for every
 * tenth line: the rest were sold before this store kept them) and a few free codes per service; `n` webhook
 * deliveries with one event and one attempt each; `n / 10` tokens and idempotency keys. Retention keeps them as in
 * steady state: the deliveries of the last 31 days, the tokens of the last 8, the keys of the last 25 hours, so that a
 * little of each is past its window. A few orders wait in `initiate` or `stock_short`, a few deliveries are pending.
 * Then ANALYZE.
 */
export async function loadVolume(db: Db, sql: Sql, n: number): Promise<void> {
  const { id: accountId } = await createAccount(db, { firstname: 'Volume', lastname: 'Account', currency: 'USD', currencySymbol: '$' });
  const services = [];
  for (let i = 0; i < CARD_SERVICES; i++) services.push(await createCardService(db));
  const serviceIds = services.map((s) => s.serviceId);
  await sql`update card_services set low_stock_threshold = 5 where id = any(${serviceIds})`;
  // Status: 1 completed for all but every 5,000th (initiate) and every 7,000th (stock_short, a code owed).
  await sql`
    insert into orders (utr, account_id, kind, status, total, currency, currency_symbol, created_at, updated_at, completed_at)
    select 'V' || lpad(i::text, 12, '0'), ${accountId}, 'card',
      case when i % 5000 = 0 then 0 when i % 7000 = 0 then 3 else 1 end, 10, 'USD', '$',
      now() - (${n} - i) * interval '3 seconds', now() - (${n} - i) * interval '3 seconds', now() - (${n} - i) * interval '3 seconds'
    from generate_series(1, ${n}) i`;
  await sql`
    insert into order_lines (order_id, card_service_id, card_id, quantity, base_price, discount, unit_price, line_total, codes_owed, created_at)
    select o.id, s.service_id, s.card_id, 1, 10, 0, 10, 10, case when o.status = 3 then 1 else 0 end, o.created_at
    from orders o
    join unnest(${serviceIds}::int[], ${services.map((s) => s.cardId)}::int[]) with ordinality as s(service_id, card_id, n)
      on s.n = o.id % ${CARD_SERVICES} + 1`;
  await sql`
    insert into card_codes (card_service_id, code_encrypted, code_digest, order_line_id, assigned_at, created_at)
    select l.card_service_id, '\\x00', sha256(('sold' || l.id)::bytea), l.id, l.created_at, l.created_at
    from order_lines l where l.id % 10 = 0 and l.codes_owed = 0`;
  await sql`
    insert into card_codes (card_service_id, code_encrypted, code_digest)
    select s.id, '\\x00', sha256(('free' || s.id || '-' || i)::bytea)
    from unnest(${serviceIds}::int[]) as s(id) cross join generate_series(1, 50) i`;
  // Deliveries: every 2,000th pending, the rest delivered when their event was made (the oldest past retention).
  await sql`
    insert into webhook_events (type, account_id, data, created_at)
    select 'order.completed', ${accountId}, '{}', now() - (${n} - i) * (interval '31 days' / ${n}) from generate_series(1, ${n}) i`;
  await sql`
    insert into webhook_deliveries (event_id, status, attempts, next_attempt_at, delivered_at, finished_at, created_at)
    select e.id, case when e.id % 2000 = 0 then 'pending' else 'delivered' end, 1, e.created_at,
      case when e.id % 2000 = 0 then null else e.created_at end, case when e.id % 2000 = 0 then null else e.created_at end, e.created_at
    from webhook_events e`;
  await sql`
    insert into webhook_attempts (delivery_id, status_code, duration_ms, created_at)
    select d.id, 200, 15, d.created_at from webhook_deliveries d`;
  await sql`
    insert into auth_tokens (account_id, token_hash, expires_at, created_at)
    select ${accountId}, sha256(('token' || i)::bytea), now() - (${n} / 10 - i) * (interval '8 days' / (${n} / 10)) + interval '1 day',
      now() - (${n} / 10 - i) * (interval '8 days' / (${n} / 10))
    from generate_series(1, ${Math.floor(n / 10)}) i`;
  await sql`
    insert into idempotency_keys (account_id, key, endpoint, request_digest, response_status, response_body, created_at)
    select ${accountId}, 'key-' || i, 'card', '\\x00', 200, '{}', now() - (${n} / 10 - i) * (interval '25 hours' / (${n} / 10))
    from generate_series(1, ${Math.floor(n / 10)}) i`;
  await sql`analyze`;
}

/** Statements that are not queries of the service's data (transaction control, settings, locks). */
const NOT_PLANNED = /^\s*(begin|commit|rollback|savepoint|release|set |select set_config|select pg_try_advisory|select pg_advisory)/i;

/**
 * Runs every worker timer once, and one scrape, on `config`'s database with every statement recorded, then EXPLAINs
 * each distinct statement with the values it was first sent with.
 */
export async function timerPlans(config: Config, sql: Sql, { settleMs = 4000 } = {}): Promise<StatementPlan[]> {
  const sent = new Map<string, readonly unknown[]>();
  const services = createServices(config, storeGauges, {
    onQuery: (query, params) => {
      if (!NOT_PLANNED.test(query) && !sent.has(query)) sent.set(query, params);
    },
  });
  try {
    // Each timer runs at once when started; the scrape reads what /metrics reads from PostgreSQL.
    const workers = await startWorkers(services);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    await services.metrics.render();
    await workers.close();
  } finally {
    await services.close();
  }
  const large = new Set(
    (await sql<{ name: string }[]>`select relname as name from pg_class where relkind = 'r' and reltuples >= ${LARGE_TABLE_ROWS}`).map((r) => r.name),
  );
  const plans: StatementPlan[] = [];
  for (const [statement, params] of sent) {
    const seqScans: string[] = [];
    const indexes: string[] = [];
    walkPlan(await planOf(sql, statement, params), (node) => {
      if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] && large.has(node['Relation Name'])) seqScans.push(node['Relation Name']);
      if (node['Index Name']) indexes.push(node['Index Name']);
    });
    plans.push({ statement: statement.replace(/\s+/g, ' ').trim(), seqScans, indexes: [...new Set(indexes)] });
  }
  return plans;
}
