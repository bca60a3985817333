import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { accountKeys, accounts, balanceLedger } from '../../db/schema.js';
import { notFound } from '../../core/errors.js';
import { randomSecret, sha256 } from '../../lib/crypto.js';
import { fromCents, MAX_MONEY, toCents } from '../../lib/money.js';

/** C25: the test balance an account's first test token opens, in the account's currency. */
export const TEST_BALANCE_OPENING = '1000.00';

/**
 * C25: the first test token of an account opens its test balance at TEST_BALANCE_OPENING, with the test statement's
 * first entry; later ones find it open (the row lock makes two first tokens open it once).
 */
export async function openTestBalance(db: DbOrTx, accountId: number): Promise<void> {
  await db.execute(sql`
    with opened as (
      update ${accounts} set test_balance = ${TEST_BALANCE_OPENING}::numeric, updated_at = now()
      where id = ${accountId} and test_balance is null
      returning id, test_balance, currency
    )
    insert into ${balanceLedger} (account_id, amount, balance_after, kind, currency, reason, livemode)
    select id, test_balance, test_balance, 'deposit', currency, 'test balance opened', false from opened`);
}

/**
 * C25: closes an account's test balance, if open, with an entry taking it to 0 in the currency it was kept in; true
 * when one was open. For a change of currency, after which it is opened again in the new one.
 */
export async function closeTestBalance(db: DbOrTx, accountId: number, reason: string): Promise<boolean> {
  const closed = await db.execute(sql`
    with old as (select id, test_balance as was, currency from ${accounts} where id = ${accountId} and test_balance is not null),
    closed as (update ${accounts} a set test_balance = null, updated_at = now() from old where a.id = old.id returning a.id),
    entry as (
      insert into ${balanceLedger} (account_id, amount, balance_after, kind, currency, reason, livemode)
      select old.id, -old.was, 0, 'adjustment', old.currency, ${reason}, false from old where old.was <> 0
    )
    select id from closed`);
  return closed.length > 0;
}

export type NewAccount = {
  firstname: string;
  lastname: string;
  email?: string | null;
  username?: string;
  currency: string;
  currencySymbol: string;
  /** Opening balance, credited through the ledger. */
  balance?: string;
};

export type AccountCredentials = { id: number; publicKey: string; secretKey: string; apiKey: string };

/** Fixed credentials (the demo account derives them from the installation key); fresh random ones otherwise. */
export type CredentialSource = Partial<Omit<AccountCredentials, 'id'>>;

/** Creates an account with its key pair and api key; the secrets are returned this once and stored hashed. */
export async function createAccount(db: DbOrTx, input: NewAccount, given: CredentialSource = {}): Promise<AccountCredentials> {
  const publicKey = given.publicKey ?? `pk_${randomSecret(18)}`;
  const secretKey = given.secretKey ?? `sk_${randomSecret(32)}`;
  const apiKey = given.apiKey ?? `ak_${randomSecret(32)}`;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(accounts)
      .values({
        firstname: input.firstname,
        lastname: input.lastname,
        email: input.email ?? null,
        username: input.username ?? `user_${randomSecret(6).toLowerCase().replace(/[^a-z0-9]/g, '')}`,
        currency: input.currency,
        currencySymbol: input.currencySymbol,
        publicKey,
        secretKeyHash: sha256(secretKey),
        apiKeyHash: sha256(apiKey),
        contactEmail: input.email ?? null,
      })
      .returning({ id: accounts.id });
    const id = row!.id;
    await tx.insert(accountKeys).values({ accountId: id, publicKey, secretKeyHash: sha256(secretKey), mode: 'live', scope: 'full' });
    if (input.balance && toCents(input.balance) > 0) await adjustBalance(tx, id, input.balance, 'deposit', 'Opening balance');
    return { id, publicKey, secretKey, apiKey };
  });
}

export type BalanceMove = { balance: string } | { refused: 'unknown_account' | 'below_zero' | 'above_maximum' };

/**
 * Moves a balance by `amount` (signed) with its ledger row, in one statement so the two never diverge.
 * The new balance must stay within 0..MAX_MONEY (the money column's range); otherwise nothing is written
 * and the reason is returned.
 */
export async function adjustBalance(
  db: DbOrTx,
  accountId: number,
  amount: string,
  kind: 'deposit' | 'adjustment',
  reason: string,
): Promise<BalanceMove> {
  const value = fromCents(toCents(amount));
  const [row] = await db.execute<{ next: string | null; balance: string | null }>(sql`
    with target as (
      select id, balance + ${value}::numeric as next from ${accounts} where id = ${accountId} for no key update
    ), moved as (
      update ${accounts} a set balance = t.next, updated_at = now()
      from target t
      where a.id = t.id and t.next >= 0 and t.next <= ${MAX_MONEY}::numeric
      returning a.id, a.balance, a.currency
    ), entry as (
      insert into ${balanceLedger} (account_id, amount, balance_after, kind, currency, reason)
      select id, ${value}::numeric, balance, ${kind}, currency, ${reason} from moved
    )
    select (select next::text from target) as next, (select balance from moved) as balance`);
  if (row?.balance) return { balance: row.balance };
  if (row?.next === null || row?.next === undefined) return { refused: 'unknown_account' };
  return { refused: toCents(row.next) < 0 ? 'below_zero' : 'above_maximum' };
}

/** Issues a new Interface B api key for an account (the old one stops working at once). */
export async function rotateApiKey(db: DbOrTx, accountId: number): Promise<string | null> {
  const apiKey = `ak_${randomSecret(32)}`;
  const rows = await db
    .update(accounts)
    .set({ apiKeyHash: sha256(apiKey), updatedAt: sql`now()` })
    .where(eq(accounts.id, accountId))
    .returning({ id: accounts.id });
  return rows.length ? apiKey : null;
}

/** The id of an existing account; an unknown one is a 404 (operator tools address accounts by id). */
export async function existingAccount(db: DbOrTx, accountId: number): Promise<number> {
  const rows = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  if (rows.length === 0) throw notFound('account', 'id', accountId);
  return accountId;
}

/**
 * C26: the addresses and CIDR ranges an account's requests may come from (`[]`: any), stored as given; unchanged when
 * `allowedIps` is undefined. Returns the list now kept. The caller drops the checked tokens, which carry the list.
 */
export async function setAllowedIps(db: DbOrTx, accountId: number, allowedIps: string[] | undefined): Promise<string[]> {
  const query =
    allowedIps === undefined
      ? db.select({ allowedIps: accounts.allowedIps }).from(accounts).where(eq(accounts.id, accountId))
      : db.update(accounts).set({ allowedIps, updatedAt: sql`now()` }).where(eq(accounts.id, accountId)).returning({ allowedIps: accounts.allowedIps });
  const [row] = await query;
  if (!row) throw notFound('account', 'id', accountId);
  return row.allowedIps;
}
