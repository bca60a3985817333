/**
 * What every call goes through (the `fetch` openapi-fetch is given): credentials on each request, one
 * `Idempotency-Key` per order kept across its retries, retries with back-off where a second attempt cannot do
 * anything twice, and any answer that is not a 2xx turned into a StoreError.
 */
import { errorOfResponse, StoreError } from './errors.js';

export type RetryOptions = {
  /** Attempts after the first (default 4). */
  retries?: number;
  /** The first wait; each next one doubles, with jitter, up to `maxDelayMs` (default 250). */
  baseDelayMs?: number;
  /** Default 4000. */
  maxDelayMs?: number;
};

export type TransportOptions = {
  baseUrl: string;
  publicKey?: string | undefined;
  secretKey?: string | undefined;
  apiKey?: string | undefined;
  retry?: RetryOptions | undefined;
  /** Renew the token this long before it expires (default 60 s, or a tenth of its lifetime when that is shorter). */
  renewBeforeMs?: number | undefined;
  fetch?: typeof fetch | undefined;
};

const TOKEN_PATH = '/api/generate/authorization-token';
/** The two order endpoints: each call gets its own Idempotency-Key (C15), which makes it safe to send again. */
const ORDER_PATHS = new Set(['/api/card/make-order', '/api/top-up/make-order']);
const IN_PROGRESS = /Idempotency-Key is still being processed/;

type Token = { value: string; renewAt: number };

/** The bearer token of the key pair: exchanged when first needed, renewed before it expires or once the store refuses it. */
class TokenKeeper {
  private token: Token | undefined;
  private pending: Promise<Token> | undefined;

  constructor(
    private readonly exchange: () => Promise<{ bearer_token: string; expires_at: string; storeDate: number }>,
    private readonly renewBeforeMs: number | undefined,
  ) {}

  async current(): Promise<string> {
    if (this.token && Date.now() < this.token.renewAt) return this.token.value;
    return (await this.renew()).value;
  }

  /** Drops `value` (the store refused it) unless a newer token already replaced it. */
  forget(value: string): void {
    if (this.token?.value === value) this.token = undefined;
  }

  /** One exchange at a time, whatever the number of calls waiting on it. */
  private renew(): Promise<Token> {
    this.pending ??= this.exchange()
      .then(({ bearer_token, expires_at, storeDate }) => {
        // The lifetime by the store's own clock, so a client clock that is off does not matter. An expiry that cannot
        // be read: the token is used until the store refuses it (then renewed once, below).
        const now = Date.now();
        const lifetime = Date.parse(expires_at) - storeNow(storeDate, now);
        const margin = this.renewBeforeMs ?? Math.min(60_000, lifetime / 10);
        const renewAt = Number.isFinite(lifetime) ? now + lifetime - margin : Number.POSITIVE_INFINITY;
        this.token = { value: bearer_token, renewAt };
        return this.token;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }
}

/**
 * The store's clock when it answered, as its Date header (`storeDate`, NaN without one) bounds it: that header names
 * the second, so the store's time lay within [storeDate, storeDate + 1 s). The second's end is taken, which can only
 * make a token look shorter-lived (by up to a second); taking the header as exact made a token taken late in a second
 * look up to that much longer-lived than it was, and a call just before its real expiry met a 401. Without a Date
 * header (a browser calling another origin does not see it) the client's own clock is all there is.
 */
function storeNow(storeDate: number, now: number): number {
  return Number.isNaN(storeDate) ? now : storeDate + 1000;
}

/** Waits `ms`, or rejects with the signal's reason once it is aborted. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const aborted = () => (clearTimeout(timer), reject(signal.reason));
    const timer = setTimeout(() => (signal.removeEventListener('abort', aborted), resolve()), ms);
    signal.addEventListener('abort', aborted, { once: true });
  });

/** A v4 UUID, also where `crypto.randomUUID` is missing (a browser page served over plain http). */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Retry-After in ms (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

export function createTransport(options: TransportOptions) {
  const send = options.fetch ?? globalThis.fetch;
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const testMode = options.publicKey?.startsWith('pk_test_') ?? false;
  const { retries = 4, baseDelayMs = 250, maxDelayMs = 4000 } = options.retry ?? {};
  /** The wait before the next attempt: doubling from baseDelayMs, with jitter, or what the store's Retry-After asks. */
  const backOff = (attempt: number, told?: number) => {
    if (told !== undefined) return told;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };
  /** The request's path below the base URL (`/api/…`, `/license-api/…`). */
  const pathOf = (url: string) => `/${new URL(url).pathname.slice(base.pathname.length)}`;

  const exchange = async () => {
    if (!options.publicKey || !options.secretKey) {
      throw new StoreError({ kind: 'unauthenticated', status: 0, messages: ['createStoreClient needs publicKey and secretKey for /api/ calls.'], method: 'POST', path: TOKEN_PATH });
    }
    const request = new Request(new URL(TOKEN_PATH.slice(1), base), {
      method: 'POST',
      headers: { PublicKey: options.publicKey, SecretKey: options.secretKey, Accept: 'application/json' },
    });
    const response = await attempt(request);
    const token = (await response.json()) as { bearer_token: string; expires_at: string };
    return { ...token, storeDate: Date.parse(response.headers.get('Date') ?? '') };
  };
  const tokens = new TokenKeeper(exchange, options.renewBeforeMs);

  /**
   * Sends one call until it has an answer to give: retried on a lost connection, a 502–504, a 429 or an order still
   * in progress under its key, but only when sending it again cannot act twice (a read, the token exchange, an order
   * under its Idempotency-Key); sent once more with a new token after a 401 (the store refuses before acting). A call
   * aborted by its signal rejects with the signal's reason.
   */
  async function attempt(request: Request): Promise<Response> {
    const path = pathOf(request.url);
    const method = request.method;
    const signal = request.signal;
    const headers = new Headers(request.headers);
    const isOrder = method === 'POST' && ORDER_PATHS.has(path);
    if (isOrder && !headers.has('Idempotency-Key')) headers.set('Idempotency-Key', newIdempotencyKey());
    const idempotencyKey = isOrder ? headers.get('Idempotency-Key')! : undefined;
    // Only the order endpoints honour an Idempotency-Key: any other write is sent once, whatever its headers.
    const safeToRepeat = method === 'GET' || path === TOKEN_PATH || isOrder;
    const usesToken = path.startsWith('/api/') && path !== TOKEN_PATH && !headers.has('Authorization');
    if (path.startsWith('/license-api/') && options.apiKey && !headers.has('X-API-Key')) headers.set('X-API-Key', options.apiKey);
    // Read once: every attempt sends the same bytes (a form keeps its boundary, which the Content-Type names).
    const body = request.body ? await request.arrayBuffer() : null;
    let renewed = false;

    for (let tries = 0; ; tries++) {
      const token = usesToken ? await tokens.current() : undefined;
      if (token) headers.set('Authorization', `Bearer ${token}`);
      let response: Response;
      try {
        // From the caller's request, so its options (signal, cache, redirect, credentials, keepalive) carry over.
        response = await send(new Request(request, { headers, body }));
      } catch (cause) {
        if (signal.aborted) throw signal.reason;
        if (safeToRepeat && tries < retries) {
          await sleep(backOff(tries), signal);
          continue;
        }
        const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
        throw new StoreError({ kind: 'network', status: 0, messages: [`No answer from the store: ${reason}`], method, path, idempotencyKey, cause });
      }
      if (response.ok) return response;
      if (response.status === 401 && token && !renewed) {
        // The token expired early or was revoked with its key: nothing was done, so one more try with a new one.
        tokens.forget(token);
        renewed = true;
        await response.body?.cancel();
        continue;
      }
      const retryable = [429, 502, 503, 504].includes(response.status) || (response.status === 409 && IN_PROGRESS.test(await peek(response)));
      const told = retryAfterMs(response.headers.get('Retry-After'));
      // A wait longer than the client would make is the caller's to decide on: the error says so.
      if (safeToRepeat && retryable && tries < retries && (told === undefined || told <= maxDelayMs)) {
        await response.body?.cancel().catch(() => undefined);
        await sleep(backOff(tries, told), signal);
        continue;
      }
      throw await errorOfResponse(response, { method, path, idempotencyKey }, testMode);
    }
  }

  return { fetch: attempt, testMode };
}

/** A 409's text, read from a copy so the answer can still become the error. */
const peek = (response: Response) => response.clone().text().catch(() => '');
