import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { hmacSha256 } from '../../../lib/crypto.js';
import type { AdapterFactory, CallbackReport, CredentialFields, PlayerAnswer, SupplierOrder, SupplierOutcome } from './types.js';

/**
 * `kind: "http"`, the store's own supplier protocol (DESIGN C22):
 * - `POST {base_url}/orders` `{reference, product_code, fields, quantity}`, `Idempotency-Key: reference`;
 * - `GET {base_url}/orders/{reference}`, `GET {base_url}/balance`;
 * - `POST {base_url}/players/check` `{product_code, fields}` → 200 `{valid, nickname?, reason?}` (C27);
 * - callbacks POSTed by the supplier with the status body and `reference`.
 * Every request and callback carries `X-Timestamp: <unix seconds>` and
 * `X-Signature: sha256=<hex HMAC-SHA256(secret, "<X-Timestamp>.<raw body>")>` (the body empty for a GET): the
 * signature covers the time, so a captured request cannot be replayed with a fresh timestamp.
 */

const MIN_SECRET_LENGTH = 16;

export const httpCredentials: CredentialFields = {
  secret: `Shared key of the HMAC-SHA256 signatures, both ways (at least ${MIN_SECRET_LENGTH} characters).`,
};

/** What `credentials` of an http provider must satisfy beyond being there: a secret long enough to sign with. */
export const httpCredentialProblems = (credentials: Record<string, string>): string[] =>
  (credentials.secret ?? '').length < MIN_SECRET_LENGTH ? [`The credentials.secret field must be at least ${MIN_SECRET_LENGTH} characters.`] : [];

/** A request or callback whose X-Timestamp is further than this from now (seconds, either way) is refused. */
export const HTTP_REPLAY_WINDOW_SECONDS = 300;

export type HttpSignatureHeaders = { 'X-Signature': string; 'X-Timestamp': string };

/** The one signing rule of the protocol, for requests and callbacks alike (the empty string for a GET). */
export function signHttpBody(secret: string, body: string, timestamp: number = nowSeconds()): HttpSignatureHeaders {
  return { 'X-Signature': signatureOf(secret, String(timestamp), body), 'X-Timestamp': String(timestamp) };
}

const signatureOf = (secret: string, timestamp: string, body: string) => `sha256=${hmacSha256(secret, `${timestamp}.${body}`).toString('hex')}`;

/** Whether `signature` is that of `timestamp` and the body, and `timestamp` lies within the replay window. */
export function verifyHttpSignature(
  secret: string,
  body: string,
  signature: string | null | undefined,
  timestamp: string | null | undefined,
  now: number = nowSeconds(),
): boolean {
  if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > HTTP_REPLAY_WINDOW_SECONDS) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

// Optional fields that cannot be read are dropped rather than making a clear status unreadable.
const statusBody = z.object({
  status: z.enum(['completed', 'pending', 'refused']),
  reference: z.string().optional().catch(undefined),
  provider_reference: z.string().max(200).optional().catch(undefined),
  reason: z.string().optional().catch(undefined),
});
type StatusBody = z.infer<typeof statusBody>;

const callbackBody = statusBody.extend({ reference: z.string().min(1).max(200) });

const playerBody = z.object({
  valid: z.boolean(),
  nickname: z.string().max(100).optional().catch(undefined),
  reason: z.string().max(200).optional().catch(undefined),
});

const balanceBody = z.object({ balance: z.string().regex(/^-?\d{1,18}(\.\d{1,8})?$/) });

const NEVER_RECEIVED = 'never received by the provider';

/** The only "never received" of the protocol: a 404 whose body says so. Any other 404 (a proxy's page, a moved URL) says nothing. */
const notFoundBody = z.object({ status: z.literal('not_found') });

function outcomeOf(body: StatusBody): SupplierOutcome {
  const ref = body.provider_reference === undefined ? {} : { providerReference: body.provider_reference };
  if (body.status === 'completed') return { kind: 'completed', ...ref };
  if (body.status === 'pending') return { kind: 'pending', ...ref };
  return { kind: 'refused', reason: (body.reason || 'refused by the provider').slice(0, 200) };
}

const unknown = (reason: string): SupplierOutcome => ({ kind: 'unknown', reason });

/** A short reason for a request that got no answer: a timeout, an abort, or the network's error code. */
function describeError(err: unknown): string {
  const name = typeof err === 'object' && err !== null && 'name' in err ? String(err.name) : '';
  if (name === 'TimeoutError') return 'timed out';
  if (name === 'AbortError') return 'aborted';
  const cause = err instanceof Error ? err.cause : undefined;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
  const message = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  return `no answer: ${message}${code && !message.includes(code) ? ` (${code})` : ''}`.slice(0, 200);
}

type Answer = { status: number; json: unknown };

/** The form's labels and values, in the form's order: how every request of the protocol names the buyer's fields. */
const labelled = (fields: SupplierOrder['fields']) => Object.fromEntries(fields.map((field) => [field.label, field.value]));

export const httpAdapter: AdapterFactory = (provider) => {
  const base = provider.baseUrl.replace(/\/+$/, '');
  const secret = provider.credentials.secret ?? '';
  const usable = secret.length >= MIN_SECRET_LENGTH;

  /** One signed request; throws when no answer arrives (network error, timeout, abort). */
  async function request(method: 'GET' | 'POST', path: string, body: string, signal: AbortSignal, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { Accept: 'application/json', ...headers, ...signHttpBody(secret, body) },
      ...(method === 'POST' ? { body } : {}),
      signal,
      // A redirect is not an answer of the protocol (and would resend the order elsewhere): it is `unknown`.
      redirect: 'manual',
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  /** Names what the answer said, for an `unknown` reason. */
  const unexpected = (answer: Answer, said: string | undefined) =>
    unknown(`HTTP ${answer.status}${said ? ` saying ${said}` : answer.json === undefined ? ' (unreadable body)' : ''}`);

  return {
    send: async (order: SupplierOrder, signal: AbortSignal) => {
      // Nothing was sent, so nothing can be delivered: the next route may have the order.
      if (!usable) return { kind: 'refused', reason: 'provider has no usable secret: not sent' };
      let answer: Answer;
      try {
        const body = JSON.stringify({
          reference: order.reference,
          product_code: order.productCode,
          fields: labelled(order.fields),
          ...(order.destination === null ? {} : { destination: order.destination }),
          quantity: order.quantity,
        });
        answer = await request('POST', '/orders', body, signal, { 'Content-Type': 'application/json', 'Idempotency-Key': order.reference });
      } catch (err) {
        return unknown(describeError(err));
      }
      const parsed = statusBody.safeParse(answer.json);
      const said = parsed.success ? parsed.data.status : undefined;
      // The status code and the body must agree: a bare 409 may well mean "I already have this order".
      if (parsed.success && parsed.data.reference !== undefined && parsed.data.reference !== order.reference) {
        return unknown(`HTTP ${answer.status} about another reference`);
      }
      if (parsed.success && answer.status === 200 && said === 'completed') return outcomeOf(parsed.data);
      if (parsed.success && answer.status === 202 && said === 'pending') return outcomeOf(parsed.data);
      if (parsed.success && (answer.status === 409 || answer.status === 422) && said === 'refused') return outcomeOf(parsed.data);
      return unexpected(answer, said);
    },

    status: async (order: SupplierOrder, signal: AbortSignal) => {
      // The secret may have changed since the order was sent: without one we cannot ask.
      if (!usable) return unknown('provider has no usable secret');
      let answer: Answer;
      try {
        answer = await request('GET', `/orders/${encodeURIComponent(order.reference)}`, '', signal);
      } catch (err) {
        return unknown(describeError(err));
      }
      if (answer.status === 404 && notFoundBody.safeParse(answer.json).success) return { kind: 'refused', reason: NEVER_RECEIVED };
      const parsed = statusBody.safeParse(answer.json);
      if (answer.status !== 200 || !parsed.success) return unexpected(answer, parsed.success ? parsed.data.status : undefined);
      if (parsed.data.reference !== undefined && parsed.data.reference !== order.reference) return unknown('HTTP 200 about another reference');
      return outcomeOf(parsed.data);
    },

    verifyCallback: ({ headers, body }): CallbackReport | null => {
      if (!usable || !verifyHttpSignature(secret, body, headers.get('x-signature'), headers.get('x-timestamp'))) return null;
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        return null;
      }
      const parsed = callbackBody.safeParse(json);
      if (!parsed.success) return null;
      return { reference: parsed.data.reference, outcome: outcomeOf(parsed.data) };
    },

    checkPlayer: async (query, signal): Promise<PlayerAnswer | null> => {
      if (!usable) return null;
      const body = JSON.stringify({
        product_code: query.productCode,
        fields: labelled(query.fields),
        ...(query.destination === null ? {} : { destination: query.destination }),
      });
      const answer = await request('POST', '/players/check', body, signal, { 'Content-Type': 'application/json' }).catch(() => null);
      const parsed = playerBody.safeParse(answer?.json);
      if (answer?.status !== 200 || !parsed.success) return null;
      const { valid, nickname, reason } = parsed.data;
      return { valid, ...(nickname ? { nickname } : {}), ...(reason ? { reason } : {}) };
    },

    balance: async (signal: AbortSignal) => {
      if (!usable) throw new Error('provider has no usable secret');
      const answer = await request('GET', '/balance', '', signal);
      const parsed = balanceBody.safeParse(answer.json);
      if (answer.status !== 200 || !parsed.success) throw new Error(`balance not readable: HTTP ${answer.status}`);
      return parsed.data.balance;
    },
  };
};
