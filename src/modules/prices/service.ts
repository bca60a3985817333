import { and, asc, count, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { refusedWhenTaken } from '../../db/conflicts.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import { accounts, balanceLedger, currencies, orders, priceTierPrices, priceTiers, type ProductKind } from '../../db/schema.js';
import type { Config } from '../../core/env.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { fromCents, toCents } from '../../lib/money.js';
import { ORDER_STATUS } from '../order-state/state.js';
import { closeTestBalance, openTestBalance } from '../accounts/service.js';
import { CATALOG_PRICES, priceKey, type PriceView } from './account-price.js';

// ───────────────────────────── price tiers ─────────────────────────────

export type TierRow = typeof priceTiers.$inferSelect;
export type TierPrice = { kind: ProductKind; serviceId: number; price: string };

/** A tier's name is its own: one taken is a validation failure of the name. */
const namedUniquely = <T>(work: () => Promise<T>): Promise<T> => refusedWhenTaken(work(), { price_tiers_name_uq: 'The name has already been taken.' });

export const createTier = (db: DbOrTx, input: { name: string; percentOff?: string }): Promise<TierRow> =>
  namedUniquely(async () => {
    const [row] = await db
      .insert(priceTiers)
      .values({ name: input.name, percentOff: fromCents(toCents(input.percentOff ?? '0')) })
      .returning();
    return row!;
  });

export const updateTier = (db: DbOrTx, id: number, input: { name?: string; percentOff?: string }): Promise<TierRow> =>
  namedUniquely(async () => {
    const [row] = await db
      .update(priceTiers)
      .set({
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.percentOff === undefined ? {} : { percentOff: fromCents(toCents(input.percentOff)) }),
        updatedAt: sql`now()`,
      })
      .where(eq(priceTiers.id, id))
      .returning();
    if (!row) throw notFound('price tier', 'id', id);
    return row;
  });

export type Tier = TierRow & { accounts: number; prices: TierPrice[] };

/** Every tier (or the one of `onlyId`) with its own prices and the number of accounts on it, by id. */
export async function listTiers(db: DbOrTx, onlyId?: number): Promise<Tier[]> {
  const [tiers, prices, members] = await Promise.all([
    db.select().from(priceTiers).where(onlyId === undefined ? undefined : eq(priceTiers.id, onlyId)).orderBy(asc(priceTiers.id)),
    db
      .select()
      .from(priceTierPrices)
      .where(onlyId === undefined ? undefined : eq(priceTierPrices.tierId, onlyId))
      .orderBy(asc(priceTierPrices.tierId), asc(priceTierPrices.cardServiceId), asc(priceTierPrices.topUpServiceId)),
    db
      .select({ tierId: accounts.priceTierId, n: count() })
      .from(accounts)
      .where(onlyId === undefined ? isNotNull(accounts.priceTierId) : eq(accounts.priceTierId, onlyId))
      .groupBy(accounts.priceTierId),
  ]);
  return tiers.map((tier) => ({
    ...tier,
    accounts: members.find((m) => m.tierId === tier.id)?.n ?? 0,
    prices: prices.filter((p) => p.tierId === tier.id).map(tierPriceOf),
  }));
}

/** One tier, or 404. */
export async function tierById(db: DbOrTx, id: number): Promise<Tier> {
  const [tier] = await listTiers(db, id);
  if (!tier) throw notFound('price tier', 'id', id);
  return tier;
}

const tierPriceOf = (row: typeof priceTierPrices.$inferSelect): TierPrice =>
  row.cardServiceId !== null
    ? { kind: 'card', serviceId: row.cardServiceId, price: row.price }
    : { kind: 'top_up', serviceId: row.topUpServiceId!, price: row.price };

/** Replaces a tier's own prices (C24: PUT) in one transaction; every service must exist (`prices.N.service id`). */
export async function setTierPrices(db: DbOrTx, tierId: number, prices: TierPrice[]): Promise<TierPrice[]> {
  const unknown: number[] = [];
  for (const kind of ['card', 'top_up'] as const) {
    const named = prices.map((p, i) => ({ ...p, i })).filter((p) => p.kind === kind);
    if (named.length === 0) continue;
    const { service } = PRODUCT_KINDS[kind];
    const found = new Set((await db.select({ id: service.id }).from(service).where(inArray(service.id, named.map((p) => p.serviceId)))).map((r) => r.id));
    for (const p of named) if (!found.has(p.serviceId)) unknown.push(p.i);
  }
  // The first, as the body's own checks name one entry.
  if (unknown.length) throw validationError([`The prices.${Math.min(...unknown)}.service id is invalid.`]);
  return db.transaction(async (tx) => {
    const [tier] = await tx.select({ id: priceTiers.id }).from(priceTiers).where(eq(priceTiers.id, tierId)).for('update');
    if (!tier) throw notFound('price tier', 'id', tierId);
    await tx.delete(priceTierPrices).where(eq(priceTierPrices.tierId, tierId));
    if (prices.length) {
      await tx.insert(priceTierPrices).values(
        prices.map((p) => ({
          tierId,
          price: fromCents(toCents(p.price)),
          ...(p.kind === 'card' ? { cardServiceId: p.serviceId } : { topUpServiceId: p.serviceId }),
        })),
      );
    }
    await tx.update(priceTiers).set({ updatedAt: sql`now()` }).where(eq(priceTiers.id, tierId));
    return prices.map((p) => ({ ...p, price: fromCents(toCents(p.price)) }));
  });
}

// ───────────────────────────── currencies ─────────────────────────────

export type CurrencyRow = { code: string; rate: string; symbol: string; base: boolean; updatedAt: string | null };

/**
 * C24: sets a currency's rate and symbol (units per one store-currency unit); the store currency's rate is always 1.
 * `symbolChanged` says whether accounts in it now show another symbol.
 */
export async function setCurrency(db: DbOrTx, config: Config, code: string, input: { rate: string; symbol: string }): Promise<CurrencyRow & { symbolChanged: boolean }> {
  if (code === config.STORE_CURRENCY) throw validationError([`The rate of ${code}, the store currency, is always 1.`]);
  const [row] = await db
    .insert(currencies)
    .values({ code, rate: input.rate, symbol: input.symbol })
    .onConflictDoUpdate({ target: currencies.code, set: { rate: input.rate, symbol: input.symbol, updatedAt: sql`now()` } })
    .returning();
  // Accounts in the currency show its symbol from now on (their orders keep the one they were placed with).
  const renamed = await db
    .update(accounts)
    .set({ currencySymbol: input.symbol })
    .where(and(eq(accounts.currency, code), sql`${accounts.currencySymbol} <> ${input.symbol}`))
    .returning({ id: accounts.id });
  return { code: row!.code, rate: row!.rate, symbol: row!.symbol, base: false, updatedAt: row!.updatedAt, symbolChanged: renamed.length > 0 };
}

/** The store currency first (rate 1), then every other by code. */
export async function listCurrencies(db: DbOrTx, config: Config): Promise<CurrencyRow[]> {
  const rows = await db.select().from(currencies).orderBy(asc(currencies.code));
  return [
    { code: config.STORE_CURRENCY, rate: '1.00000000', symbol: config.STORE_CURRENCY_SYMBOL, base: true, updatedAt: null },
    ...rows.map((r) => ({ code: r.code, rate: r.rate, symbol: r.symbol, base: false, updatedAt: r.updatedAt })),
  ];
}

// ───────────────────────────── an account's prices ─────────────────────────────

/**
 * C24: moves an account to a tier (or none) and, while its balance is 0 and no order of it, live or test, is still open
 * (a refund credits the currency it debited), to another currency the store has a rate for; an open test balance is
 * opened again in it (C25). Entries of its ledger written
 * before entries kept their currency are given the old one first, so its statement stays true.
 */
export async function changeAccountPrices(
  db: DbOrTx,
  config: Config,
  accountId: number,
  input: { priceTierId?: number | null; currency?: string },
): Promise<{ priceTierId: number | null; currency: string; currencySymbol: string }> {
  return db.transaction(async (tx) => {
    const [account] = await tx
      .select({ balance: accounts.balance, currency: accounts.currency, currencySymbol: accounts.currencySymbol, priceTierId: accounts.priceTierId })
      .from(accounts)
      .where(eq(accounts.id, accountId))
      // NO KEY UPDATE, like every write of a balance: it does not wait on the foreign-key checks of rows of the
      // account's being written (an order's Idempotency-Key, its ledger entry).
      .for('no key update');
    if (!account) throw notFound('account', 'id', accountId);
    const messages: string[] = [];
    if (input.priceTierId != null) {
      const [tier] = await tx.select({ id: priceTiers.id }).from(priceTiers).where(eq(priceTiers.id, input.priceTierId));
      if (!tier) messages.push('The selected price tier id is invalid.');
    }
    let symbol = account.currencySymbol;
    const newCurrency = input.currency !== undefined && input.currency !== account.currency ? input.currency : null;
    if (newCurrency !== null) {
      const known = await currencyOf(tx, config, newCurrency, true);
      if (!known) messages.push(unknownCurrency(newCurrency));
      else symbol = known.symbol;
    }
    if (messages.length) throw validationError(messages);
    if (newCurrency !== null) {
      const [open] = await tx
        .select({ n: count() })
        .from(orders)
        // Test orders too: a test order's refund goes back to the test balance (C25), which moves to the new currency.
        .where(and(eq(orders.accountId, accountId), inArray(orders.status, [ORDER_STATUS.initiate, ORDER_STATUS.stock_short])));
      if (toCents(account.balance) !== 0 || open!.n > 0) throw new AppError('currency_locked');
      await tx.update(balanceLedger).set({ currency: account.currency }).where(and(eq(balanceLedger.accountId, accountId), isNull(balanceLedger.currency)));
    }
    // Play money has no rate: the test balance is closed in the old currency and opened again in the new one.
    const reopenTestBalance = newCurrency !== null && (await closeTestBalance(tx, accountId, `test balance closed: the account moved to ${newCurrency}`));
    const [row] = await tx
      .update(accounts)
      .set({
        ...(input.priceTierId === undefined ? {} : { priceTierId: input.priceTierId }),
        ...(newCurrency === null ? {} : { currency: newCurrency, currencySymbol: symbol }),
        updatedAt: sql`now()`,
      })
      .where(eq(accounts.id, accountId))
      .returning({ priceTierId: accounts.priceTierId, currency: accounts.currency, currencySymbol: accounts.currencySymbol });
    if (reopenTestBalance) await openTestBalance(tx, accountId);
    return row!;
  });
}

export const unknownCurrency = (code: string) => `The selected currency is invalid: the store has no rate for ${code}.`;

/**
 * The store currency (rate 1) or one with a rate; null for one the store has none for. `locked`: its row is held
 * (FOR SHARE) until the transaction ends, so a symbol change waits for an account moving to it, and finds it.
 */
export async function currencyOf(db: DbOrTx, config: Config, code: string, locked = false): Promise<{ symbol: string; rate: string | null } | null> {
  if (code === config.STORE_CURRENCY) return { symbol: config.STORE_CURRENCY_SYMBOL, rate: null };
  const query = db.select({ symbol: currencies.symbol, rate: currencies.rate }).from(currencies).where(eq(currencies.code, code));
  const [row] = locked ? await query.for('share') : await query;
  return row ?? null;
}

// ───────────────────────────── the view a catalog read prices with ─────────────────────────────

/** How a caller is priced: the facts of its account the catalog's answers vary by. */
export type PricedAs = { priceTierId: number | null; currency: string };

/** Reads through a cache (the catalog cache: dropped everywhere when tiers or rates change). */
export type Cached = <T>(key: string, load: () => Promise<T>) => Promise<T>;

/** The price view of a tier and currency, read through `cached`. */
export async function priceViewOf(db: DbOrTx, config: Config, cached: Cached, as: PricedAs): Promise<PriceView> {
  if (as.priceTierId === null && as.currency === config.STORE_CURRENCY) return CATALOG_PRICES;
  const [tier, rate] = await Promise.all([
    as.priceTierId === null ? null : cached(`price-tier:${as.priceTierId}`, () => tierView(db, as.priceTierId!)),
    as.currency === config.STORE_CURRENCY ? null : cached(`currency:${as.currency}`, async () => (await currencyOf(db, config, as.currency))?.rate ?? null),
  ]);
  return { percentOff: tier?.percentOff ?? '0', overrides: tier?.overrides ?? new Map(), rate };
}

async function tierView(db: DbOrTx, tierId: number): Promise<Pick<PriceView, 'percentOff' | 'overrides'> | null> {
  const [tier] = await db.select({ percentOff: priceTiers.percentOff }).from(priceTiers).where(eq(priceTiers.id, tierId));
  if (!tier) return null;
  const prices = await db.select().from(priceTierPrices).where(eq(priceTierPrices.tierId, tierId));
  return { percentOff: tier.percentOff, overrides: new Map(prices.map((row) => { const p = tierPriceOf(row); return [priceKey(p.kind, p.serviceId), p.price]; })) };
}
