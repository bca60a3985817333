import { matchesDigest, sha256 } from './crypto.js';

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match ? match[1]!.trim() : null;
}

/** A presented secret compared in constant time against the configured one. */
export function isConfiguredSecret(presented: string | null, expected: string): boolean {
  return presented !== null && matchesDigest(presented, sha256(expected));
}

/**
 * Who may read `/metrics` (C16), on the API port and on a worker's WORKER_METRICS_PORT alike: `Authorization:
 * Bearer $METRICS_TOKEN`. Unset, the series are served nowhere (`hidden`: the route answers as an unknown one).
 */
export function metricsAccess(authorization: string | undefined, token: string | undefined): 'allowed' | 'refused' | 'hidden' {
  if (!token) return 'hidden';
  return isConfiguredSecret(bearerToken(authorization), token) ? 'allowed' : 'refused';
}
