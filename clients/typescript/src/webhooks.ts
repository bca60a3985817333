/**
 * Verifies an event the store sent (C17) as the Standard Webhooks specification says: the HMAC-SHA256 of
 * `webhook-id.webhook-timestamp.body` under the endpoint's secret, one of the `v1,` signatures, and a timestamp within
 * five minutes. Web Crypto only, so it runs in Node 20, browsers, and edge runtimes alike.
 */
import type { webhooks } from './openapi.js';

type EventOf<Name extends keyof webhooks> = NonNullable<webhooks[Name]['post']['requestBody']>['content']['application/json'];

/** An event as the store sends it: `order.completed`, `order.stock_short`, `order.refunded` or `webhook.test`. */
export type WebhookEvent = EventOf<keyof webhooks>;

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Headers as a Fetch `Headers`, or a plain object such as Node's `IncomingHttpHeaders`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const TOLERANCE_SECONDS = 5 * 60;
const encoder = new TextEncoder();

const isFetchHeaders = (headers: WebhookHeaders): headers is Headers => typeof (headers as Headers).get === 'function';

function header(headers: WebhookHeaders, name: string): string {
  const value = isFetchHeaders(headers) ? headers.get(name) : (headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]);
  const single = Array.isArray(value) ? value[0] : value;
  if (!single) throw new WebhookVerificationError(`The ${name} header is missing.`);
  return single;
}

function parsed(bytes: Uint8Array): WebhookEvent {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The body is not JSON.');
  }
}

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/**
 * The event, once its signature and timestamp are verified; a WebhookVerificationError otherwise. Pass the body
 * exactly as it arrived (the raw text or bytes, not a parsed and re-serialised object).
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const sentAt = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - sentAt) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('The webhook-timestamp is missing or too far from now.');
  }
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey('raw', fromBase64(secret.replace(/^whsec_/, '')), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  } catch {
    throw new WebhookVerificationError('The secret is not a whsec_ secret.');
  }
  // The bytes as they came: what the store signed.
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  for (const candidate of signatures.split(' ')) {
    const [version, signature] = candidate.split(',');
    if (version !== 'v1' || !signature) continue;
    let mac: Uint8Array<ArrayBuffer>;
    try {
      mac = fromBase64(signature);
    } catch {
      continue;
    }
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify('HMAC', key, mac, signed)) return parsed(bytes);
  }
  throw new WebhookVerificationError('No signature matches.');
}
