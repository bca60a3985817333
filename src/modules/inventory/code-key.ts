import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { cardCodes, installation } from '../../db/schema.js';
import { hmacSha256 } from '../../lib/crypto.js';
import { openCode } from './codes.js';

const FINGERPRINT = 'code_encryption_key_fingerprint';

/** A public name for a key: the first 16 hex digits of an HMAC under it (tells keys apart, reveals nothing). */
export const keyFingerprint = (key: Buffer): string => hmacSha256(key, 'code-encryption-key:fingerprint').toString('hex').slice(0, 16);

export async function storedKeyFingerprint(db: DbOrTx): Promise<string | null> {
  const [row] = await db.select({ value: installation.value }).from(installation).where(sql`${installation.name} = ${FINGERPRINT}`);
  return row?.value ?? null;
}

export type KeyCheck = { ok: true } | { ok: false; stored: string; presented: string };

/**
 * C20: card codes are only ever sealed with the key that opens the ones already stored. The first start
 * records the key's fingerprint (after checking that it opens a stored code, for databases that predate
 * the fingerprint); every later start compares against it.
 */
export async function adoptCodeKey(db: DbOrTx, key: Buffer): Promise<KeyCheck> {
  const presented = keyFingerprint(key);
  let stored = await storedKeyFingerprint(db);
  if (stored === null) {
    const [sample] = await db.select({ sealed: cardCodes.codeEncrypted }).from(cardCodes).limit(1);
    if (sample && !opens(key, sample.sealed)) return { ok: false, stored: 'unrecorded', presented };
    await db.insert(installation).values({ name: FINGERPRINT, value: presented }).onConflictDoNothing();
    stored = await storedKeyFingerprint(db);
  }
  return stored === presented ? { ok: true } : { ok: false, stored: stored ?? 'unrecorded', presented };
}

function opens(key: Buffer, sealed: Buffer): boolean {
  try {
    openCode(key, sealed);
    return true;
  } catch {
    return false;
  }
}
