import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { accountKeys, accounts, authTokens, type KeyMode, type KeyScope } from '../../db/schema.js';
import { notFound } from '../../core/errors.js';
import { randomSecret, sha256 } from '../../lib/crypto.js';
import { existingAccount } from './service.js';

/** A new key pair (C25): its secret is shown this once and kept only as its digest. */
export type NewKey = { public_key: string; secret_key: string; mode: KeyMode; scope: KeyScope };

/** A key as it is listed: never its secret. */
export type KeyView = { public_key: string; mode: KeyMode; scope: KeyScope; created_at: string; last_used_at: string | null; revoked_at: string | null };

/** Issues a key pair of `mode` and `scope` to an account; `pk_test_…`/`sk_test_…` in test mode. */
export async function createKey(db: DbOrTx, accountId: number, { mode, scope }: { mode: KeyMode; scope: KeyScope }): Promise<NewKey> {
  await existingAccount(db, accountId);
  const prefix = mode === 'test' ? '_test' : '';
  const publicKey = `pk${prefix}_${randomSecret(18)}`;
  const secretKey = `sk${prefix}_${randomSecret(32)}`;
  await db.insert(accountKeys).values({ accountId, publicKey, secretKeyHash: sha256(secretKey), mode, scope });
  return { public_key: publicKey, secret_key: secretKey, mode, scope };
}

/** An account's keys, oldest first, revoked ones included (with when). */
export async function listKeys(db: DbOrTx, accountId: number) {
  await existingAccount(db, accountId);
  return db
    .select({
      publicKey: accountKeys.publicKey,
      mode: accountKeys.mode,
      scope: accountKeys.scope,
      createdAt: accountKeys.createdAt,
      lastUsedAt: accountKeys.lastUsedAt,
      revokedAt: accountKeys.revokedAt,
    })
    .from(accountKeys)
    .where(eq(accountKeys.accountId, accountId))
    .orderBy(asc(accountKeys.id));
}

/**
 * Revokes one of an account's keys and every token exchanged for it, in one transaction (C25: they stop at once; the
 * caller then tells every process to forget the tokens it has checked). The account's first key also ends the tokens
 * issued for it before keys were kept apart. Revoking a revoked key changes nothing; another account's key is a 404.
 */
export async function revokeKey(db: DbOrTx, accountId: number, publicKey: string): Promise<{ public_key: string; revoked_at: string }> {
  return db.transaction(async (tx) => {
    const [key] = await tx
      .update(accountKeys)
      .set({ revokedAt: sql`coalesce(${accountKeys.revokedAt}, now())` })
      .where(and(eq(accountKeys.accountId, accountId), eq(accountKeys.publicKey, publicKey)))
      .returning({ id: accountKeys.id, revokedAt: accountKeys.revokedAt });
    if (!key) throw notFound('key', 'public key', publicKey);
    await tx.update(authTokens).set({ revokedAt: sql`now()` }).where(and(eq(authTokens.keyId, key.id), isNull(authTokens.revokedAt)));
    const [first] = await tx.select({ publicKey: accounts.publicKey }).from(accounts).where(eq(accounts.id, accountId));
    if (first?.publicKey === publicKey) {
      await tx.update(authTokens).set({ revokedAt: sql`now()` }).where(and(eq(authTokens.accountId, accountId), isNull(authTokens.keyId), isNull(authTokens.revokedAt)));
    }
    return { public_key: publicKey, revoked_at: key.revokedAt! };
  });
}
