import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { accountKeys, accounts, authTokens, type KeyMode, type KeyScope } from '../../db/schema.js';
import { matchesDigest, randomSecret, sha256 } from '../../lib/crypto.js';
import type { Caller } from '../../core/caller.js';
import { compileAllowList, type AllowList } from '../../lib/allow-list.js';
import { openTestBalance } from '../accounts/service.js';

/** What an exchange found: a token, a wrong secret for a key that exists, or no such (live) key. */
export type Exchange =
  | { token: string; expiresAt: string }
  | { refused: 'wrong_secret' | 'unknown_key' }
  /** The right pair from an address the account's allow-list does not hold (C26): no token, and no failure. */
  | { refused: 'address'; address: string };

/**
 * C3: exchanges a key pair (one of the account's keys not revoked, C25) for an opaque token (32 random bytes) stored
 * only as its SHA-256 digest, of the key's mode and scope. The answer to a refusal never says which it was; the caller
 * counts the two apart (a public key is public: failures with it must not lock its owner out).
 */
export async function exchangeKeyPair(db: Db, publicKey: string, secretKey: string, ttlSeconds: number, address: string): Promise<Exchange> {
  // An account opened by a process of the previous release (a rolling restart) has its pair only in `accounts`: it
  // becomes the account's first key on its first exchange.
  const [key] = await db.execute<{ id: number; account_id: number; secret_key_hash: Buffer; revoked: boolean; mode: KeyMode; allowed_ips: string[] }>(sql`
    with found as (
      select id, account_id, secret_key_hash, revoked_at is not null as revoked, mode from ${accountKeys} where public_key = ${publicKey}
    ), legacy as (
      insert into ${accountKeys} (account_id, public_key, secret_key_hash)
      select a.id, a.public_key, a.secret_key_hash from ${accounts} a where a.public_key = ${publicKey} and not exists (select 1 from found)
      on conflict (public_key) do nothing
      returning id, account_id, secret_key_hash, false as revoked, mode
    ), key as (select * from found union all select * from legacy)
    select key.*, a.allowed_ips from key join ${accounts} a on a.id = key.account_id`);
  // Compare against a dummy digest for unknown keys so both paths cost the same.
  const digest = key?.secret_key_hash ?? sha256(`unknown:${publicKey}`);
  if (!matchesDigest(secretKey, digest) || !key || key.revoked) return { refused: key ? 'wrong_secret' : 'unknown_key' };
  const allowList = compileAllowList(key.allowed_ips);
  if (allowList && !allowList.allows(address)) return { refused: 'address', address };

  const token = randomSecret(32);
  const [row] = await db
    .insert(authTokens)
    .values({
      accountId: key.account_id,
      keyId: key.id,
      tokenHash: sha256(token),
      expiresAt: sql`now() + make_interval(secs => ${ttlSeconds})`,
    })
    .returning({ expiresAt: authTokens.expiresAt });
  await Promise.all([
    db.update(accountKeys).set({ lastUsedAt: sql`now()` }).where(eq(accountKeys.id, key.id)),
    db.update(accounts).set({ lastSeenAt: sql`now()` }).where(eq(accounts.id, key.account_id)),
    key.mode === 'test' ? openTestBalance(db, key.account_id) : null,
  ]);
  return { token, expiresAt: row!.expiresAt };
}

/**
 * The account behind a live (unexpired, unrevoked) token of a key not revoked, with the key's scope and the account's
 * compiled address allow-list (kept with the token in the process cache, C26); null otherwise.
 * A token issued before keys were kept apart is one of the account's first key: live and full.
 */
export async function accountForToken(db: Db, token: string): Promise<(Caller & { expiresAt: string; allowList: AllowList | null }) | null> {
  const [row] = await db
    .select({
      id: accounts.id,
      currency: accounts.currency,
      currencySymbol: accounts.currencySymbol,
      priceTierId: accounts.priceTierId,
      scope: sql<KeyScope>`coalesce(${accountKeys.scope}, 'full')`,
      livemode: sql<boolean>`coalesce(${accountKeys.mode}, 'live') = 'live'`,
      allowedIps: accounts.allowedIps,
      expiresAt: authTokens.expiresAt,
    })
    .from(authTokens)
    .innerJoin(accounts, eq(accounts.id, authTokens.accountId))
    .leftJoin(accountKeys, eq(accountKeys.id, authTokens.keyId))
    .where(
      and(eq(authTokens.tokenHash, sha256(token)), gt(authTokens.expiresAt, sql`now()`), isNull(authTokens.revokedAt), isNull(accountKeys.revokedAt)),
    )
    .limit(1);
  if (!row) return null;
  const { allowedIps, ...caller } = row;
  return { ...caller, allowList: compileAllowList(allowedIps) };
}
