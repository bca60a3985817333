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

type Token = { value: string; expiresAt: number; renewAt: number };

/** The bearer token of the key pair: exchanged when first needed, renewed before it expires or once the store refuses it. */
class TokenKeeper {
  private token: Token | undefined;
  private pending: Promise<Token> | undefined;

  constructor(
    private readonly exchange: () => Promise<{ bearer_token: string; expires_at: string }>,
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
      .then(({ bearer_token, expires_at }) => {
        const now = Date.now();
        const expiresAt = Date.parse(expires_at);
        const lifetime = Math.max(0, expiresAt - now);
        const margin = this.renewBeforeMs ?? Math.min(60_000, lifetime / 10);
        this.token = { value: bearer_token, expiresAt, renewAt: expiresAt - margin };
        return this.token;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }
}

const sleep = (ms: number, signal: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export function createTransport(options: TransportOptions) {
  const send = options.fetch ?? globalThis.fetch;
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const testMode = options.publicKey?.startsWith('pk_test_') ?? false;
  const { retries = 4, baseDelayMs = 250, maxDelayMs = 4000 } = options.retry ?? {};
  const backOff = (attempt: number, retryAfter: string | null) => {
    const told = Number(retryAfter);
    if (retryAfter && Number.isFinite(told)) return Math.min(told * 1000, maxDelayMs);
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
    return (await response.json()) as { bearer_token: string; expires_at: string };
  };
  const tokens = new TokenKeeper(exchange, options.renewBeforeMs);

  /**
   * Sends one call until it has an answer to give: retried on a lost connection, a 502–504, a 429 or an order still
   * in progress under its key, but only when sending it again cannot act twice (a read, the token exchange, an order
   * under its Idempotency-Key); sent once more with a new token after a 401.
   */
  async function attempt(request: Request): Promise<Response> {
    const path = pathOf(request.url);
    const method = request.method;
    const headers = new Headers(request.headers);
    if (method === 'POST' && ORDER_PATHS.has(path) && !headers.has('Idempotency-Key')) headers.set('Idempotency-Key', crypto.randomUUID());
    const safeToRepeat = method === 'GET' || path === TOKEN_PATH || headers.has('Idempotency-Key');
    const usesToken = path.startsWith('/api/') && path !== TOKEN_PATH && !headers.has('Authorization');
    if (path.startsWith('/license-api/') && options.apiKey && !headers.has('X-API-Key')) headers.set('X-API-Key', options.apiKey);
    // Read once: every attempt sends the same bytes.
    const body = request.body ? await request.arrayBuffer() : undefined;
    let renewed = false;

    for (let tries = 0; ; tries++) {
      const token = usesToken ? await tokens.current() : undefined;
      if (token) headers.set('Authorization', `Bearer ${token}`);
      let response: Response;
      try {
        response = await send(new Request(request.url, { method, headers, body: body ?? null, signal: request.signal }));
      } catch (cause) {
        if (safeToRepeat && tries < retries && !request.signal.aborted) {
          await sleep(backOff(tries, null), request.signal);
          continue;
        }
        const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
        throw new StoreError({ kind: 'network', status: 0, messages: [`No answer from the store: ${reason}`], method, path, cause });
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
      if (safeToRepeat && retryable && tries < retries) {
        await response.body?.cancel().catch(() => undefined);
        await sleep(backOff(tries, response.headers.get('Retry-After')), request.signal);
        continue;
      }
      throw await errorOfResponse(response, { method, path }, testMode);
    }
  }

  return { fetch: attempt, testMode };
}

/** A 409's text, read from a copy so the answer can still become the error. */
const peek = (response: Response) => response.clone().text().catch(() => '');
