import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { orderLines, orders } from '../../db/schema.js';
import type { Config } from '../../core/env.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { isoMicros } from '../../lib/time.js';
import { MAX_MONEY, moneyNumber, moneyText, toCents } from '../../lib/money.js';
import { adjustBalance, createAccount, setAllowedIps, type AccountCredentials } from '../accounts/service.js';
import { changeAccountPrices, currencyOf, unknownCurrency } from '../prices/service.js';
import { createKey, listKeys, revokeKey } from '../accounts/keys.js';
import type { KeyMode, KeyScope } from '../../db/schema.js';
import type { Services } from '../../runtime/services.js';
import { refundOrder } from '../fulfilment/index.js';
import { restockCardService } from '../fulfilment/index.js';
import { addCodes, type ImportCounts } from '../inventory/service.js';
import { deliveryState, isOpenOutcome, type DeliveryState } from '../order-state/delivery.js';
import { unobserved, type StatusObserver } from '../order-state/events.js';
import { STATUS_LABELS, type OrderStatus } from '../order-state/state.js';

export type NewOperatorAccount = { firstname: string; lastname: string; email?: string; currency?: string; balance?: string };

/** An account pays in the store currency unless it is opened in another the store has a rate for (C24). */
export async function openAccount(db: Db, config: Config, input: NewOperatorAccount): Promise<AccountCredentials> {
  const currency = input.currency ?? config.STORE_CURRENCY;
  const known = await currencyOf(db, config, currency);
  if (!known) throw validationError([unknownCurrency(currency)]);
  return createAccount(db, {
    firstname: input.firstname,
    lastname: input.lastname,
    email: input.email ?? null,
    currency,
    currencySymbol: known.symbol,
    balance: input.balance,
  });
}

/**
 * C24: an account's price tier and currency; C26: its address allow-list; all or nothing. Every process forgets the
 * tokens it has checked, which carry them, so the account's next request anywhere is priced and checked the new way.
 */
export async function changeAccount(
  { db, config, tokenCache }: Pick<Services, 'db' | 'config' | 'tokenCache'>,
  accountId: number,
  input: { price_tier_id?: number | null; currency?: string; allowed_ips?: string[] },
) {
  const changed = await db.transaction(async (tx) => {
    const prices = await changeAccountPrices(tx, config, accountId, { priceTierId: input.price_tier_id, currency: input.currency });
    return { ...prices, allowedIps: await setAllowedIps(tx, accountId, input.allowed_ips) };
  });
  await tokenCache.invalidate();
  return {
    id: accountId,
    price_tier_id: changed.priceTierId,
    currency: changed.currency,
    currency_symbol: changed.currencySymbol,
    allowed_ips: changed.allowedIps,
  };
}

/** Credits (amount > 0) or debits an account through the ledger; the balance never goes below zero. */
export async function moveBalance(db: Db, accountId: number, amount: string, reason: string): Promise<{ balance: number }> {
  const moved = await adjustBalance(db, accountId, amount, toCents(amount) > 0 ? 'deposit' : 'adjustment', reason);
  if ('balance' in moved) return { balance: moneyNumber(moved.balance) };
  if (moved.refused === 'unknown_account') throw notFound('account', 'id', accountId);
  if (moved.refused === 'below_zero') throw new AppError('balance_below_zero');
  throw validationError([`The amount field must not take the balance above ${MAX_MONEY}.`]);
}

export type ImportResult = { added: number; skipped: number; fulfilled_orders: number | null };

/** How waiting `stock_short` orders get the new codes: the number of orders fulfilled (null: not known yet). */
export type Restock = (cardServiceId: number) => Promise<number | null>;

/** How long an import over HTTP waits for its restock (C13). */
export const RESTOCK_WAIT_MS = 10_000;

/**
 * C13: `restock` awaited up to `waitMs`. Past it the answer is null and the restock goes on in the background, its
 * failure told to `onLateFailure`; orders a stop leaves waiting are the reconciler's, which restocks every service that
 * has waiting orders and free codes.
 */
export const awaitedUpTo =
  (restock: Restock, waitMs: number, onLateFailure: (err: unknown) => void): Restock =>
  async (cardServiceId) => {
    const running = restock(cardServiceId);
    const timedOut = Symbol('timed out');
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<typeof timedOut>((resolve) => (timer = setTimeout(resolve, waitMs, timedOut)));
    try {
      const result = await Promise.race([running, waited]);
      if (result !== timedOut) return result;
      running.catch(onLateFailure);
      return null;
    } finally {
      clearTimeout(timer);
    }
  };

/**
 * Restocks in the importing process (the API or the CLI), so that an import's answer never depends on a worker
 * process; `observe` hears of the orders it moves.
 */
export const restockHere =
  (db: Db, observe: StatusObserver = unobserved): Restock =>
  async (cardServiceId) =>
    (await restockCardService(db, cardServiceId, observe)).fulfilledOrders;

/**
 * Operator task (HTTP and CLI): stores new codes of a card service (a list, or lines streamed from a file or an
 * upload; all or none of them), then has waiting orders fulfilled. `onBatch` follows the import.
 */
export async function importCodes(
  { db, codeKey, restock }: { db: Db; codeKey: Buffer; restock: Restock },
  cardServiceId: number,
  codes: Iterable<string> | AsyncIterable<string>,
  onBatch?: (counts: ImportCounts) => void,
): Promise<ImportResult> {
  const { added, skipped } = await addCodes(db, codeKey, cardServiceId, codes, onBatch);
  return { added, skipped, fulfilled_orders: await restock(cardServiceId) };
}

export type OrderFilter = { status?: OrderStatus; mode?: 'live' | 'test' | 'all'; page: number; perPage: number };

/** One order as operators see it: every account, prices and progress, never the card codes. */
export type AdminOrder = {
  id: number;
  utr: string;
  account_id: number;
  kind: string;
  status: OrderStatus;
  status_label: string;
  price: string;
  refunded_amount: string;
  currency: string;
  symbol: string;
  /** C24: the rate the order was converted at; null in the store currency. */
  rate: string | null;
  livemode: boolean;
  informations: Record<string, string> | null;
  note: string | null;
  /** Top-ups: where the delivery stands (order-state/delivery.ts), and since when the order waits for an operator (C8). */
  delivery: DeliveryState | null;
  awaiting_operator_since: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  lines: Array<{
    card_service_id: number | null;
    top_up_service_id: number | null;
    quantity: number;
    unit_price: string;
    line_total: string;
    campaign_units: number;
    codes_owed: number;
  }>;
};

/** Orders of all accounts, newest first (C11), with their total count. */
export async function listOrders(db: Db, { status, mode = 'live', page, perPage }: OrderFilter): Promise<{ data: AdminOrder[]; total: number }> {
  const where = and(status === undefined ? undefined : eq(orders.status, status), mode === 'all' ? undefined : eq(orders.livemode, mode === 'live'));
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(orders)
      .where(where)
      .orderBy(desc(orders.createdAt), desc(orders.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(orders).where(where),
  ]);
  const ids = rows.map((r) => r.id);
  const [lines, open] = ids.length
    ? await Promise.all([
        db.select().from(orderLines).where(inArray(orderLines.orderId, ids)).orderBy(orderLines.id),
        db.execute<{ order_id: number }>(sql`
          select order_id::float8 as order_id from provider_attempts
          where order_id = any(${sql.param(ids)}::bigint[]) and ${isOpenOutcome(sql`outcome`)}`),
      ])
    : [[], []];
  const withOpenAttempt = new Set(open.map((row) => row.order_id));
  const data = rows.map((order): AdminOrder => {
    const status = order.status;
    return {
      id: order.id,
      utr: order.utr,
      account_id: order.accountId,
      kind: order.kind,
      status,
      status_label: STATUS_LABELS[status],
      price: moneyText(order.total),
      refunded_amount: moneyText(order.refundedAmount),
      currency: order.currency,
      symbol: order.currencySymbol,
      rate: order.rate,
      livemode: order.livemode,
      informations: order.informations,
      note: order.note,
      delivery:
        order.kind === 'top_up'
          ? deliveryState({ status, with_operator: order.awaitingOperatorSince !== null }, withOpenAttempt.has(order.id))
          : null,
      awaiting_operator_since: isoMicros(order.awaitingOperatorSince),
      created_at: isoMicros(order.createdAt),
      updated_at: isoMicros(order.updatedAt),
      completed_at: isoMicros(order.completedAt),
      lines: lines
        .filter((line) => line.orderId === order.id)
        .map((line) => ({
          card_service_id: line.cardServiceId,
          top_up_service_id: line.topUpServiceId,
          quantity: line.quantity,
          unit_price: moneyText(line.unitPrice),
          line_total: moneyText(line.lineTotal),
          campaign_units: line.campaignUnits,
          codes_owed: line.codesOwed,
        })),
    };
  });
  return { data, total: counted?.total ?? 0 };
}

/**
 * C25: sets an account's test balance (the one its test orders are paid from), with a ledger entry of the test
 * balance saying by how much it moved.
 */
export async function setTestBalance(db: Db, accountId: number, amount: string): Promise<{ id: number; test_balance: string }> {
  const [row] = await db.execute<{ id: number; test_balance: string }>(sql`
    with old as (select id, coalesce(test_balance, 0) as was from accounts where id = ${accountId} for no key update),
    set as (
      update accounts a set test_balance = ${amount}::numeric, updated_at = now() from old where a.id = old.id
      returning a.id, a.test_balance, a.currency, old.was
    ),
    entry as (
      insert into balance_ledger (account_id, amount, balance_after, kind, currency, reason, livemode)
      select id, test_balance - was, test_balance, 'adjustment', currency, 'test balance set by an operator', false from set
      where test_balance <> was
    )
    select id, test_balance::text from set`);
  if (!row) throw notFound('account', 'id', accountId);
  return { id: accountId, test_balance: moneyText(row.test_balance) };
}

/** Refunds a non-completed order (C8): a top-up only with no supplier attempt open (order-state/delivery.ts). */
export async function refundForOperator(db: Db, utr: string, reason: string, observe: StatusObserver = unobserved) {
  const refunded = await refundOrder(db, utr, reason, observe);
  return { ...refunded, refunded_amount: moneyText(refunded.refunded_amount) };
}

// ───────────────────────────── keys (C25, C26) ─────────────────────────────

/** Issues a key pair: live, or test (C25: its tokens act on the account's test balance, orders and webhooks). */
export const issueKey = (db: Db, accountId: number, input: { mode: KeyMode; scope: KeyScope }) => createKey(db, accountId, input);

export const accountKeysOf = async (db: Db, accountId: number) =>
  (await listKeys(db, accountId)).map((key) => ({
    public_key: key.publicKey,
    mode: key.mode,
    scope: key.scope,
    created_at: isoMicros(key.createdAt)!,
    last_used_at: isoMicros(key.lastUsedAt),
    revoked_at: isoMicros(key.revokedAt),
  }));

/** Revokes a key: its tokens stop at once in the database, and every process forgets the tokens it has checked. */
export async function withdrawKey({ db, tokenCache }: Pick<Services, 'db' | 'tokenCache'>, accountId: number, publicKey: string) {
  const revoked = await revokeKey(db, accountId, publicKey);
  await tokenCache.invalidate();
  return { public_key: revoked.public_key, revoked_at: isoMicros(revoked.revoked_at)! };
}
