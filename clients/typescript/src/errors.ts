/**
 * Every failure of the store as one error: either interface's envelope (Interface A `{status: "failed", errors}`,
 * Interface B `{status: "error", msg}`), a token exchange that was refused, or a connection that failed.
 */

/** What went wrong, named, so callers branch on a word rather than on status codes and message texts. */
export type StoreErrorKind =
  | 'network' // no answer: the connection failed or was cut (an order sent with an Idempotency-Key was retried first)
  | 'bad_request' // 400, 405, 408, 413, 431: the request could not be read
  | 'unauthenticated' // 401: invalid key pair, api key, or a token the store no longer takes (after one renewal)
  | 'read_only_key' // 403: a token of a `read` key asked to write (C26)
  | 'address_not_allowed' // 403: the account's allow-list does not hold the caller's address (C26)
  | 'forbidden' // 403, anything else
  | 'not_found' // 404
  | 'insufficient_balance' // 409: the live balance is short
  | 'insufficient_test_balance' // 409: the test balance of a test key is short (C25: an operator sets it)
  | 'above_max_price' // 409: the order costs more than its max_price (C24)
  | 'idempotency_conflict' // 409: the Idempotency-Key was used with another body
  | 'idempotency_in_progress' // 409: the first request with this key was still running after every retry: it may yet place the order
  | 'conflict' // 409, any other business rule (already reviewed, not purchasable, …)
  | 'validation' // 422: `messages` holds one message per failing field
  | 'rate_limited' // 429
  | 'unavailable' // 503: a dependency of the store is down (retried first where that is safe)
  | 'server'; // 500 and any other status

export type StoreErrorDetails = {
  kind: StoreErrorKind;
  status: number;
  messages: string[];
  requestId?: string | undefined;
  method: string;
  path: string;
  /** The envelope as it came (undefined without an answer or when the answer was not JSON). */
  body?: unknown;
  /** The order's Idempotency-Key: send the order again with it to learn whether it was placed, never a second one. */
  idempotencyKey?: string | undefined;
  cause?: unknown;
};

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly kind: StoreErrorKind;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The envelope's messages: one per failing field for a 422, else one. */
  readonly messages: string[];
  /** The store's id of the request (`request_id` of a 5xx envelope, else the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  /**
   * On an order (either make-order), the Idempotency-Key it was sent with. After a `network`, `unavailable`, `server`
   * or `idempotency_in_progress` error the order may have been placed: send it again with this key (the same body) and
   * the store answers the first order's utr, or places it once.
   */
  readonly idempotencyKey: string | undefined;

  constructor(details: StoreErrorDetails) {
    super(`${details.method} ${details.path}: ${details.messages.join(' ') || `HTTP ${details.status}`}`, { cause: details.cause });
    this.kind = details.kind;
    this.status = details.status;
    this.messages = details.messages;
    this.requestId = details.requestId;
    this.method = details.method;
    this.path = details.path;
    this.body = details.body;
    this.idempotencyKey = details.idempotencyKey;
  }
}

export const isStoreError = (error: unknown, kind?: StoreErrorKind): error is StoreError =>
  error instanceof StoreError && (kind === undefined || error.kind === kind);

/** The messages of either interface's envelope (or of a body that is none). */
export function envelopeMessages(body: unknown): { messages: string[]; requestId?: string } {
  if (body && typeof body === 'object') {
    const envelope = body as { errors?: unknown; msg?: unknown; request_id?: unknown };
    const requestId = typeof envelope.request_id === 'string' ? envelope.request_id : undefined;
    const messages = Array.isArray(envelope.errors)
      ? envelope.errors.map(String)
      : typeof envelope.errors === 'string'
        ? [envelope.errors]
        : typeof envelope.msg === 'string'
          ? [envelope.msg]
          : [];
    return requestId ? { messages, requestId } : { messages };
  }
  return { messages: typeof body === 'string' && body ? [body.slice(0, 500)] : [] };
}

/** Names a failure from its status and, where one status means several things, from the store's message (C2, C15, C24–C26). */
export function kindOf(status: number, messages: string[], testMode: boolean): StoreErrorKind {
  const message = messages.join(' ');
  switch (status) {
    case 400:
    case 405:
    case 408:
    case 413:
    case 431:
      return 'bad_request';
    case 401:
      return 'unauthenticated';
    case 403:
      if (/can only read/.test(message)) return 'read_only_key';
      if (/^Requests from .* are not allowed/.test(message)) return 'address_not_allowed';
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      if (/^Insufficient balance/.test(message)) return testMode ? 'insufficient_test_balance' : 'insufficient_balance';
      if (/above max_price/.test(message)) return 'above_max_price';
      if (/Idempotency-Key was used with a different request/.test(message)) return 'idempotency_conflict';
      if (/Idempotency-Key is still being processed/.test(message)) return 'idempotency_in_progress';
      return 'conflict';
    case 422:
      return 'validation';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return 'server';
  }
}

/** The StoreError of an answer that is not a 2xx (its body read here). */
export async function errorOfResponse(
  response: Response,
  request: { method: string; path: string; idempotencyKey?: string | undefined },
  testMode: boolean,
): Promise<StoreError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): its text is the message.
  }
  const { messages, requestId } = envelopeMessages(body);
  return new StoreError({
    kind: kindOf(response.status, messages, testMode),
    status: response.status,
    messages,
    requestId: requestId ?? response.headers.get('x-request-id') ?? undefined,
    ...request,
    body,
  });
}
