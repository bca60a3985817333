/**
 * The error catalogue (C2): one code → HTTP status → client message.
 * Handlers and domain functions throw AppError; the app's error handler renders the envelope.
 */
export const ERRORS = {
  bad_request: { status: 400, message: 'The request body could not be read.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  request_timeout: { status: 408, message: 'The request took too long to arrive.' },
  // An unsupported content type is told what the route takes (readableBody).
  unsupported_media_type: { status: 400, message: 'Unsupported content type. Send application/json or a form body.' },
  unsupported_media_type_json: { status: 400, message: 'Unsupported content type. Send application/json.' },
  unsupported_media_type_codes: {
    status: 400,
    message: 'Unsupported content type. Send text/plain (one code per line) or application/json {"codes": [...]}.',
  },
  unauthenticated: { status: 401, message: 'Unauthenticated.' },
  invalid_credentials: { status: 401, message: 'Invalid public key or secret key.' },
  forbidden: { status: 401, message: 'Invalid admin token.' },
  metrics_forbidden: { status: 401, message: 'Invalid metrics token.' },
  bad_signature: { status: 401, message: 'The signature is missing, stale or not valid.' },
  // C26: a token of a read-only key asked to write.
  read_only_key: { status: 403, message: 'This key can only read.' },
  // C26: said with the address, "Requests from 192.0.2.1 are not allowed for this account." (addressNotAllowed).
  address_not_allowed: { status: 403, message: 'Requests from this address are not allowed for this account.' },
  not_found: { status: 404, message: 'Resource not found.' },
  route_not_found: { status: 404, message: 'The requested endpoint does not exist.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed here.' },
  validation: { status: 422, message: 'The given data was invalid.' },
  insufficient_balance: { status: 409, message: 'Insufficient balance' },
  // Said with both figures: "The order costs 12.50 USD, above max_price 12.00." (C24).
  above_max_price: { status: 409, message: 'The order costs more than its max_price.' },
  already_reviewed: { status: 409, message: 'You have already reviewed this product.' },
  not_purchased: { status: 409, message: 'Only customers who ordered this product can review it.' },
  not_purchasable: { status: 409, message: 'This product cannot be ordered right now.' },
  idempotency_conflict: { status: 409, message: 'This Idempotency-Key was used with a different request.' },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed.' },
  currency_locked: { status: 409, message: 'The currency of an account can change only at a zero balance with no order in progress.' },
  balance_below_zero: { status: 409, message: 'The balance cannot go below zero.' },
  invalid_transition: { status: 409, message: 'The order cannot change to that status.' },
  category_in_use: { status: 409, message: 'The type of a category cannot change while it holds products.' },
  webhook_limit: { status: 409, message: 'An account can have at most 10 webhook endpoints.' },
  already_delivered: { status: 409, message: 'This delivery has been delivered already.' },
  provider_from_environment: {
    status: 409,
    message: "This provider is TOPUP_PROVIDER's: its name, address, credentials and status are set from the environment at every start.",
  },
  rate_limited: { status: 429, message: 'Too many attempts. Please try again later.' },
  client_closed: { status: 499, message: 'The client closed the request.' },
  internal: { status: 500, message: 'Something went wrong. Please try again later.' },
  unavailable: { status: 503, message: 'The service is temporarily unavailable. Please try again shortly.' },
  admin_disabled: { status: 503, message: 'The admin API is disabled: ADMIN_TOKEN is not set.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly status: number;
  /** A string for general failures, an array of strings for validation failures (spec §7). */
  readonly errors: string | string[];

  constructor(
    readonly code: ErrorCode,
    errors?: string | string[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof errors === 'string' ? errors : ERRORS[code].message);
    this.status = ERRORS[code].status;
    this.errors = errors ?? ERRORS[code].message;
  }
}

export const validationError = (messages: string[]) => new AppError('validation', messages);

/** C26: a request from an address the account's allow-list does not hold, naming the address as it was read. */
export const addressNotAllowed = (address: string) => new AppError('address_not_allowed', `Requests from ${address} are not allowed for this account.`);

/** How a value the client sent is shown in a message: digits as they are, anything else quoted (and cut short). */
const shown = (value: unknown) => (/^\d{1,40}$/.test(String(value)) ? String(value) : JSON.stringify(String(value).slice(0, 100)));

/**
 * The 404 of a resource that does not exist, naming it (C2): `notFound('account', 'id', 7)` → "No account with id 7.",
 * `notFound('top-up', 'slug', 'x')` → `No top-up with the slug "x".`.
 */
export const notFound = (what: string, by: string, value: unknown) =>
  new AppError('not_found', `No ${what} with ${by === 'id' ? 'id' : `the ${by}`} ${shown(value)}.`);

/** The codes of a connection to PostgreSQL or Redis that failed or was cut (the request may succeed again). */
const DEPENDENCY_DOWN = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // admin_shutdown (a terminated backend), crash_shutdown, cannot_connect_now
  '57P01',
  '57P02',
  '57P03',
  // read_only_sql_transaction: a write reached a standby (a failover under way)
  '25006',
  // A transaction PostgreSQL rolled back at COMMIT (postgres.js patch): nothing was written, it may be sent again.
  'COMMIT_ROLLED_BACK',
]);

/**
 * Connection failures to PostgreSQL or Redis answer 503 rather than 500 (C2), wherever they sit in the cause chain.
 * SQLSTATE class 08 (connection exception) is how a pooler such as PgBouncer reports a server it lost or cannot reach.
 */
export function isDependencyDown(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: string }).code ?? '';
    const message = e instanceof Error ? e.message : '';
    if (DEPENDENCY_DOWN.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /Connection is closed|Stream isn't writeable/.test(message)) return true;
  }
  return false;
}
