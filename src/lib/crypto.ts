import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh opaque secret: `bytes` of entropy, base64url. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Secrets we generate are high-entropy, so a plain SHA-256 digest is a sound stored form. */
export function sha256(value: string): Buffer {
  // The one-shot hash: on every request (the token's cache key), a Hash object per call showed in the profile.
  return hash('sha256', value, 'buffer');
}

/** Constant-time comparison of a presented secret against its stored digest. */
export function matchesDigest(presented: string, digest: Buffer): boolean {
  const candidate = sha256(presented);
  return candidate.length === digest.length && timingSafeEqual(candidate, digest);
}

export function hmacSha256(key: Buffer | string, value: string): Buffer {
  return createHmac('sha256', key).update(value, 'utf8').digest();
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM: iv | tag | ciphertext. */
export function encrypt(key: Buffer, plaintext: string): Buffer {
  return sealWith(key, randomBytes(IV_BYTES), plaintext);
}

function sealWith(key: Buffer, iv: Buffer, plaintext: string): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function decrypt(key: Buffer, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES), undefined, 'utf8') + decipher.final('utf8');
}

/**
 * Seals text this process keeps in memory (an order page with its card codes) under a key of its own, drawn when it is
 * made and never written anywhere: the text is in the clear only while it is being sent. One cipher per text,
 * however many secrets it holds: opening a page's codes one by one was most of an order list's CPU.
 */
export function processSeal(): { seal: (text: string) => Buffer; open: (sealed: Buffer) => string } {
  const key = randomBytes(32);
  // The key is this process's alone, so a counter is a nonce never used twice under it (NIST SP 800-38D, 8.2.1): unlike
  // random nonces, no bound on how many texts one key seals.
  let nonces = 0n;
  return {
    seal: (text) => {
      const iv = Buffer.alloc(IV_BYTES);
      iv.writeBigUInt64BE((nonces += 1n), IV_BYTES - 8);
      const pooled = sealWith(key, iv, text);
      // Memory of its own rather than a slice of Node's shared pool: what keeps it holds no more than its length.
      const own = Buffer.allocUnsafeSlow(pooled.length);
      pooled.copy(own);
      return own;
    },
    open: (sealed) => decrypt(key, sealed),
  };
}
