import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { accounts, authTokens } from '../../db/schema.js';
import { matchesDigest, randomSecret, sha256 } from '../../lib/crypto.js';
import type { Caller } from '../../core/caller.js';

/**
 * C3: exchanges a key pair for an opaque token (32 random bytes) stored only as its SHA-256 digest.
 * Returns null for an unknown public key or a wrong secret, without saying which.
 */
export async function exchangeKeyPair(
  db: Db,
  publicKey: string,
  secretKey: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: string } | null> {
  const [account] = await db
    .select({ id: accounts.id, secretKeyHash: accounts.secretKeyHash })
    .from(accounts)
    .where(eq(accounts.publicKey, publicKey))
    .limit(1);
  // Compare against a dummy digest for unknown keys so both paths cost the same.
  const digest = account?.secretKeyHash ?? sha256(`unknown:${publicKey}`);
  if (!matchesDigest(secretKey, digest) || !account) return null;

  const token = randomSecret(32);
  const [row] = await db
    .insert(authTokens)
    .values({
      accountId: account.id,
      tokenHash: sha256(token),
      expiresAt: sql`now() + make_interval(secs => ${ttlSeconds})`,
    })
    .returning({ expiresAt: authTokens.expiresAt });
  await db.update(accounts).set({ lastSeenAt: sql`now()` }).where(eq(accounts.id, account.id));
  return { token, expiresAt: row!.expiresAt };
}

/** The account behind a live (unexpired, unrevoked) token, or null. */
export async function accountForToken(db: Db, token: string): Promise<(Caller & { expiresAt: string }) | null> {
  const [row] = await db
    .select({
      id: accounts.id,
      currency: accounts.currency,
      currencySymbol: accounts.currencySymbol,
      priceTierId: accounts.priceTierId,
      expiresAt: authTokens.expiresAt,
    })
    .from(authTokens)
    .innerJoin(accounts, eq(accounts.id, authTokens.accountId))
    .where(and(eq(authTokens.tokenHash, sha256(token)), gt(authTokens.expiresAt, sql`now()`), isNull(authTokens.revokedAt)))
    .limit(1);
  return row ?? null;
}
