import { decrypt, encrypt, hmacSha256 } from '../../lib/crypto.js';

/**
 * Card codes at rest: AES-256-GCM ciphertext plus a keyed digest, so an import can skip
 * duplicates without decrypting the inventory. Only the owner's order list ever decrypts.
 */
export function sealCode(key: Buffer, code: string): { codeEncrypted: Buffer; codeDigest: Buffer } {
  return { codeEncrypted: encrypt(key, code), codeDigest: hmacSha256(key, `card-code:${code}`) };
}

export function openCode(key: Buffer, sealed: Buffer): string {
  return decrypt(key, sealed);
}
