/** Operators' use cases for top-up suppliers (C22): providers, routes, one order's attempts, the margin report. */
import { inArray, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import { providers, type OrderField, type ProviderKind, type ProviderStatus } from '../../db/schema.js';
import { refusedWhenTaken } from '../../db/conflicts.js';
import type { Config } from '../../core/env.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { fromCents, moneyText, toCents } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';
import { deliveryState, OPEN_OUTCOMES } from '../order-state/delivery.js';
import { ORDER_STATUS, type OrderStatus } from '../order-state/state.js';
import { PROVIDER_KINDS } from '../suppliers/registry.js';
import { sealCredentials } from '../suppliers/connections.js';
import { destinationNames } from '../suppliers/destination.js';

export type ProviderInput = {
  name: string;
  kind: ProviderKind;
  base_url: string;
  credentials: Record<string, string>;
  timeout_ms?: number;
  status?: ProviderStatus;
  balance_low_threshold?: string | null;
};

/** A provider as operators see it: never its credentials. */
export type ProviderView = {
  id: number;
  name: string;
  kind: ProviderKind;
  base_url: string;
  timeout_ms: number;
  status: ProviderStatus;
  circuit: 'open' | 'closed';
  circuit_open_until: string | null;
  last_error: string | null;
  last_error_at: string | null;
  balance: string | null;
  balance_checked_at: string | null;
  balance_low_threshold: string | null;
  from_environment: boolean;
  created_at: string;
  updated_at: string;
};

const PROVIDER_VIEW = sql`
  id, name, kind, base_url, timeout_ms, status, from_environment,
  case when circuit_open_until > now() then 'open' else 'closed' end as circuit,
  case when circuit_open_until > now() then circuit_open_until end as circuit_open_until,
  last_error, last_error_at, balance, balance_checked_at, balance_low_threshold, created_at, updated_at`;

/** Timestamps as C2 has them (ISO 8601 UTC, microseconds), whatever PostgreSQL wrote. */
const presentProvider = (row: ProviderView): ProviderView => ({
  ...row,
  circuit_open_until: isoMicros(row.circuit_open_until),
  last_error_at: isoMicros(row.last_error_at),
  balance_checked_at: isoMicros(row.balance_checked_at),
  created_at: isoMicros(row.created_at),
  updated_at: isoMicros(row.updated_at),
});

/** Every credential the kind needs is given, and nothing else: a typo never silently drops the real field. */
function checkCredentials(kind: ProviderKind, credentials: Record<string, string>): void {
  const wanted = Object.keys(PROVIDER_KINDS[kind].credentials);
  const missing = wanted.filter((name) => !credentials[name]);
  const extra = Object.keys(credentials).filter((name) => !wanted.includes(name));
  const problems = [
    ...missing.map((name) => `The credentials.${name} field is required for ${kind} providers.`),
    ...extra.map((name) => `The credentials.${name} field is not used by ${kind} providers (they take ${wanted.join(', ')}).`),
    ...(missing.length || extra.length ? [] : (PROVIDER_KINDS[kind].problems?.(credentials) ?? [])),
  ];
  if (problems.length) throw validationError(problems);
}

/** A name taken by another provider, whatever its case: the field's validation failure (422). */
const nameChecked = <T>(write: Promise<T>) => refusedWhenTaken(write, { providers_name_uq: 'The name has already been taken.' });

export async function createProvider(db: Db, codeKey: Buffer, input: ProviderInput): Promise<ProviderView> {
  checkCredentials(input.kind, input.credentials);
  const [row] = await nameChecked(db.execute<ProviderView>(sql`
    with created as (
      insert into providers (name, kind, base_url, credentials_sealed, timeout_ms, status, balance_low_threshold)
      values (${input.name}, ${input.kind}, ${input.base_url}, ${sealCredentials(codeKey, input.credentials)},
              ${input.timeout_ms ?? 10_000}, ${input.status ?? 'active'}, ${input.balance_low_threshold ?? null}::numeric)
      returning *
    )
    select ${PROVIDER_VIEW} from created`));
  return presentProvider(row!);
}

/**
 * Changes the fields given; `credentials`, when given, replace the stored ones whole. The TOPUP_PROVIDER=http
 * provider's name, address, credentials and status are the environment's, written at every start: refused here.
 */
export async function updateProvider(db: Db, codeKey: Buffer, id: number, patch: Partial<Omit<ProviderInput, 'kind'>>): Promise<ProviderView> {
  const [current] = await db.execute<{ kind: ProviderKind; from_environment: boolean }>(sql`select kind, from_environment from providers where id = ${id}`);
  if (!current) throw notFound('provider', 'id', id);
  const fromEnvironment = (['name', 'base_url', 'credentials', 'status'] as const).filter((field) => patch[field] !== undefined);
  if (current.from_environment && fromEnvironment.length) throw new AppError('provider_from_environment');
  if (patch.credentials) checkCredentials(current.kind, patch.credentials);
  const set = [
    patch.name !== undefined && sql`name = ${patch.name}`,
    patch.base_url !== undefined && sql`base_url = ${patch.base_url}`,
    patch.credentials !== undefined && sql`credentials_sealed = ${sealCredentials(codeKey, patch.credentials)}`,
    patch.timeout_ms !== undefined && sql`timeout_ms = ${patch.timeout_ms}`,
    patch.status !== undefined && sql`status = ${patch.status}`,
    patch.balance_low_threshold !== undefined && sql`balance_low_threshold = ${patch.balance_low_threshold}::numeric`,
  ].filter((part) => part !== false);
  await nameChecked(db.execute(sql`update providers set ${sql.join([...set, sql`updated_at = now()`], sql`, `)} where id = ${id}`));
  return (await listProviders(db, id))[0]!;
}

/** The name the TOPUP_PROVIDER=http provider takes. */
export const ENVIRONMENT_PROVIDER = 'TOPUP_PROVIDER';

/**
 * The TOPUP_PROVIDER=http provider as a provider like any other (C22 amended: one delivery path), written by every
 * worker start from TOPUP_PROVIDER_URL and TOPUP_PROVIDER_SECRET: its attempts are recorded, settled and shown as any
 * provider's, and a service without routes goes to it. With TOPUP_PROVIDER=manual a row left by an earlier start is
 * disabled: its open attempts are still settled, no new order goes to it.
 */
export async function syncEnvironmentProvider(db: DbOrTx, config: Config): Promise<void> {
  if (config.TOPUP_PROVIDER !== 'http') {
    await db.execute(sql`update providers set status = 'disabled', updated_at = now() where from_environment and status <> 'disabled'`);
    return;
  }
  const sealed = sealCredentials(config.codeEncryptionKey, { secret: config.TOPUP_PROVIDER_SECRET! });
  const write = db.execute(sql`
    insert into providers (name, kind, base_url, credentials_sealed, status, from_environment)
    values (${ENVIRONMENT_PROVIDER}, 'http', ${config.TOPUP_PROVIDER_URL!}, ${sealed}, 'active', true)
    on conflict (from_environment) where from_environment do update
      set base_url = excluded.base_url, credentials_sealed = excluded.credentials_sealed, status = 'active', updated_at = now()`);
  await write.catch((err: { code?: string; constraint_name?: string }) => {
    if (err.code === '23505' && err.constraint_name === 'providers_name_uq') {
      throw new Error(`TOPUP_PROVIDER: a provider named ${ENVIRONMENT_PROVIDER} exists already; rename it (PATCH /admin/providers/:id) so that the environment's can take the name`);
    }
    throw err;
  });
}

/** Every provider (or one), with its circuit state, last error and last known balance. */
export const listProviders = async (db: DbOrTx, id?: number): Promise<ProviderView[]> => [
  ...(await db.execute<ProviderView>(sql`
    select ${PROVIDER_VIEW} from providers
    where ${id === undefined ? sql`true` : sql`id = ${id}`}
    order by id`)),
].map(presentProvider);

export type RouteInput = { provider_id: number; product_code: string; cost?: string | null; destination?: string | null };
export type RouteView = Required<RouteInput> & { position: number; provider: string };

/**
 * Replaces a top-up service's routes, in priority order (`[]`: an operator fulfils its orders by hand). A route's
 * destination may only name fields of the service's order form.
 */
export async function setRoutes(db: Db, topUpServiceId: number, routes: RouteInput[]): Promise<RouteView[]> {
  return db.transaction(async (tx) => {
    const [service] = await tx.execute<{ form: OrderField[] | Record<string, OrderField> }>(sql`
      select t.order_information as form from top_up_services s join top_ups t on t.id = s.top_up_id where s.id = ${topUpServiceId} for update of s`);
    if (!service) throw notFound('top-up service', 'id', topUpServiceId);
    const ids = routes.map((route) => route.provider_id);
    const known = new Set(ids.length ? (await tx.select({ id: providers.id }).from(providers).where(inArray(providers.id, ids))).map((row) => row.id) : []);
    const names = new Set(Object.values(service.form).map((field) => field.field_name));
    const problems = routes.flatMap((route, i) => [
      ...(known.has(route.provider_id) ? [] : [`The routes.${i}.provider id is invalid.`]),
      ...destinationNames(route.destination ?? '')
        .filter((name) => !names.has(name))
        .map((name) => `The routes.${i}.destination field names ${name}, which is not a field of the order form.`),
    ]);
    if (problems.length) throw validationError(problems);
    await tx.execute(sql`delete from top_up_routes where top_up_service_id = ${topUpServiceId}`);
    await tx.execute(sql`update top_up_services set routes_set_at = now() where id = ${topUpServiceId}`);
    for (const [position, route] of routes.entries()) {
      await tx.execute(sql`
        insert into top_up_routes (top_up_service_id, position, provider_id, product_code, cost, destination)
        values (${topUpServiceId}, ${position}, ${route.provider_id}, ${route.product_code}, ${route.cost ?? null}::numeric, ${route.destination ?? null})`);
    }
    return routesOf(tx, topUpServiceId);
  });
}

export async function routesOf(db: DbOrTx, topUpServiceId: number): Promise<RouteView[]> {
  const [service] = await db.execute(sql`select 1 from top_up_services where id = ${topUpServiceId}`);
  if (!service) throw notFound('top-up service', 'id', topUpServiceId);
  return [...(await db.execute<RouteView>(sql`
    select r.position, r.provider_id, p.name as provider, r.product_code, r.cost, r.destination
    from top_up_routes r join providers p on p.id = r.provider_id
    where r.top_up_service_id = ${topUpServiceId} order by r.position`))];
}

export type AttemptView = {
  id: number;
  provider_id: number;
  provider: string;
  product_code: string;
  base_url: string | null;
  destination: string | null;
  cost: string | null;
  outcome: string;
  provider_reference: string | null;
  detail: string | null;
  status_queries: number;
  started_at: string;
  settled_at: string | null;
  settled_by: 'provider' | 'operator' | null;
  settle_reason: string | null;
};

/** One order of any account, with its lines, its fields, where its delivery stands and every provider attempt (C22). */
export async function showOrder(db: DbOrTx, utr: string) {
  const [order] = await db.execute<Record<string, unknown> & { id: number; total: string; refunded_amount: string; status: OrderStatus; kind: string; with_operator: boolean }>(sql`
    select o.id::float8 as id, o.utr, o.account_id, o.kind, o.livemode, o.status, o.total, o.currency, o.rate::text as rate, o.refunded_amount, o.note,
           o.informations, o.fields, o.awaiting_operator_since, o.awaiting_operator_since is not null as with_operator,
           o.created_at, o.updated_at, o.completed_at,
           coalesce((select jsonb_agg(jsonb_build_object(
             'top_up_service_id', l.top_up_service_id, 'card_service_id', l.card_service_id, 'quantity', l.quantity,
             'unit_price', l.unit_price::text, 'line_total', l.line_total::text) order by l.id)
             from order_lines l where l.order_id = o.id), '[]'::jsonb) as lines
    from orders o where o.utr = ${utr}`);
  if (!order) throw notFound('order', 'utr', utr);
  const attempts = await db.execute<AttemptView>(sql`
    select a.id::float8 as id, a.provider_id, p.name as provider, a.product_code, a.base_url, a.destination, a.cost, a.outcome,
           a.provider_reference, a.detail, a.status_queries, a.created_at as started_at, a.settled_at, a.settled_by, a.settle_reason
    from provider_attempts a join providers p on p.id = a.provider_id
    where a.order_id = ${order.id} order by a.id`);
  const { id: _id, with_operator, ...rest } = order;
  const times = ['awaiting_operator_since', 'created_at', 'updated_at', 'completed_at'] as const;
  const open = attempts.find((attempt) => (OPEN_OUTCOMES as readonly string[]).includes(attempt.outcome));
  return {
    ...rest,
    total: moneyText(order.total),
    refunded_amount: moneyText(order.refunded_amount),
    delivery: order.kind === 'top_up' ? deliveryState({ status: order.status, with_operator }, open !== undefined) : null,
    ...Object.fromEntries(times.map((key) => [key, isoMicros(order[key] as string | null)])),
    attempts: attempts.map((attempt) => ({ ...attempt, started_at: isoMicros(attempt.started_at), settled_at: isoMicros(attempt.settled_at) })),
  };
}

export type MarginRow = {
  provider_id: number;
  provider: string;
  top_up_service_id: number;
  service: string;
  currency: string;
  rate?: string;
  sales_in_currency?: string;
  orders: number;
  sales: string;
  cost: string;
  margin: string;
};

/**
 * Sales, cost and margin of the top-ups delivered by a provider between `from` (inclusive) and `to` (exclusive),
 * per provider and service: sales are what the buyers paid, cost what the route said the provider charges.
 */
export async function marginReport(db: DbOrTx, config: Pick<Config, 'STORE_CURRENCY'>, from: string, to: string) {
  // Sales are in the store currency, as costs are: an order in another currency counts its total at its own rate
  // (C24), and its row names the currency, the rate and the sales as they were charged.
  const rows = await db.execute<MarginRow & { rate: string | null; sales_in_currency: string | null }>(sql`
    with sold as (
      select o.id, o.status, o.currency, o.rate, o.total,
             case when o.rate is null then o.total else round(o.total / o.rate, 2) end as store_total
      from orders o
    )
    select a.provider_id, p.name as provider, l.top_up_service_id, s.name as service, o.currency, o.rate::text as rate, count(*)::int as orders,
           case when o.rate is null then null else sum(o.total)::numeric(14, 2)::text end as sales_in_currency,
           sum(o.store_total)::numeric(14, 2)::text as sales, coalesce(sum(a.cost), 0)::numeric(14, 2)::text as cost,
           (sum(o.store_total) - coalesce(sum(a.cost), 0))::numeric(14, 2)::text as margin
    from provider_attempts a
    join sold o on o.id = a.order_id
    join order_lines l on l.order_id = o.id
    join providers p on p.id = a.provider_id
    join top_up_services s on s.id = l.top_up_service_id
    -- Delivered and kept: an order refunded after its attempt completed (by an operator, before a settlement was
    -- required) sold nothing.
    where a.outcome = 'completed' and o.status = ${ORDER_STATUS.completed}
      and a.settled_at >= ${from}::timestamptz and a.settled_at < ${to}::timestamptz
    group by a.provider_id, p.name, l.top_up_service_id, s.name, o.currency, o.rate
    order by a.provider_id, l.top_up_service_id, o.currency, o.rate nulls first`);
  // Per provider and in total, in cents: each service row counts towards its provider and the total.
  type Sums = { orders: number; sales: number; cost: number };
  const total: Sums = { orders: 0, sales: 0, cost: 0 };
  const byProvider = new Map<number, Sums & { provider_id: number; provider: string }>();
  for (const row of rows) {
    const entry = byProvider.get(row.provider_id) ?? { provider_id: row.provider_id, provider: row.provider, orders: 0, sales: 0, cost: 0 };
    byProvider.set(row.provider_id, entry);
    for (const sums of [entry, total]) {
      sums.orders += row.orders;
      sums.sales += toCents(row.sales);
      sums.cost += toCents(row.cost);
    }
  }
  const figures = <T extends Sums>({ sales, cost, ...rest }: T) => ({ ...rest, sales: fromCents(sales), cost: fromCents(cost), margin: fromCents(sales - cost) });
  const services = rows.map(({ rate, sales_in_currency, ...row }) => ({ ...row, ...(rate === null ? {} : { rate, sales_in_currency: sales_in_currency! }) }));
  return { from, to, currency: config.STORE_CURRENCY, providers: [...byProvider.values()].map(figures), services, total: figures(total) };
}

/** Per provider, for /metrics: whether its circuit is open, and its orders sent and not yet settled. */
export const providerStates = async (db: DbOrTx) =>
  (
    await db.execute<{ provider: string; circuit_open: boolean; unsettled: number }>(sql`
      select p.name as provider, coalesce(p.circuit_open_until > now(), false) as circuit_open,
             (select count(*)::int from provider_attempts a where a.provider_id = p.id and a.outcome in ('sending', 'pending', 'unknown')) as unsettled
      from providers p order by p.id`)
  ).map((row) => ({ provider: row.provider, circuitOpen: row.circuit_open, unsettled: row.unsettled }));
