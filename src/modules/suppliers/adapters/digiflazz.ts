/**
 * Digiflazz buyer API (prepaid top-ups), written from the publisher's documentation at developer.digiflazz.com,
 * "API Transaksi › Buyer": Topup (/api/buyer/topup), Cek Saldo (/api/buyer/cek-saldo), Response Code
 * (/api/buyer/response-code) and Webhooks (/api/buyer/webhook). The pages show no version or date; they were
 * followed as found on 2026-11-26.
 *
 * - `base_url` is the API host, e.g. `https://api.digiflazz.com` (requests go to `{base_url}/v1/...`).
 * - The webhook (Atur Koneksi › API › Webhook, with a secret) is set in the Digiflazz panel to point at
 *   `/callbacks/providers/{id}`; no `cb_url` is sent, as the adapter does not know the store's public address.
 * - Every call is a JSON POST; an answer that is not a 2xx JSON `{data: {...}}` (a redirect included: it is not
 *   followed), a timeout or a cut connection is `unknown` (the documentation says nothing of HTTP statuses, only of `rc`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AdapterFactory, CredentialFields, SupplierOrder, SupplierOutcome } from './types.js';

export const digiflazzCredentials: CredentialFields = {
  username: 'the API username (Atur Koneksi › API)',
  api_key: 'the API key of the mode in use (production or development); signs every request',
  webhook_secret: 'the secret of the webhook set in Atur Koneksi › API › Webhook; signs callbacks (X-Hub-Signature)',
};

/** rc 49 "Ref ID tidak unik": the ref_id is already taken, so never a refusal; a status query settles it. */
const DUPLICATE_REF_ID = '49';

/**
 * rc of the Response Code table whose "Transaksi Terbentuk" is "Tidak": the request was turned away before any
 * transaction was formed (bad payload, signature, username, unknown SKU, balance, IP, limits, blocks, ...).
 */
const NOT_FORMED = new Set([
  '40', '41', '42', '43', '44', '45', '47', '49', '56', '61', '62', '63', '64', '65', '66', '67', '68', '69',
  '80', '81', '82', '83', '87', '88',
]);

type Data = Record<string, unknown>;
type Phase = 'send' | 'status' | 'callback';

const md5 = (value: string) => createHash('md5').update(value, 'utf8').digest('hex');
const text = (value: unknown) => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const isRecord = (value: unknown): value is Data => typeof value === 'object' && value !== null && !Array.isArray(value);
const unknown = (reason: string): SupplierOutcome => ({ kind: 'unknown', reason });

/**
 * Digiflazz takes one destination, `customer_no`: the route's `destination` when it has one, otherwise the values of
 * the order's text fields joined in the form's order with no separator (selects, such as a server region, left out),
 * which is how Digiflazz game products take a user id and a zone id ("12345678" + "1234" → "123456781234").
 */
function customerNo(order: SupplierOrder): string {
  return order.destination ?? order.fields.filter((field) => field.type === 'text').map((field) => field.value).join('');
}

/**
 * Maps Digiflazz's answer about one ref_id onto the four outcomes. "Sukses" and "Pending" (rc 03, and 99 "DF Router
 * Issue", which Digiflazz answers as Pending) are what they say; "Gagal" is final per Digiflazz (nothing delivered).
 */
function outcomeOf(data: Data, reference: string, phase: Phase): SupplierOutcome {
  const rc = text(data.rc);
  const said = `${rc} ${text(data.message)}`.trim();
  const about = text(data.ref_id);
  if (about && about !== reference) return unknown(`answer about another ref_id (${about})`);
  if (rc === DUPLICATE_REF_ID) return unknown(`${said}: the ref_id is already known to Digiflazz`);
  switch (data.status) {
    case 'Sukses': {
      const sn = text(data.sn);
      return sn ? { kind: 'completed', providerReference: sn } : { kind: 'completed' };
    }
    case 'Pending':
      return { kind: 'pending' };
    case 'Gagal':
      // A status query re-sends the transaction: a refusal that forms no transaction (a rotated key, an IP no longer
      // whitelisted, a drained balance) turned away that request, and says nothing of the transaction already made.
      if (phase === 'status' && NOT_FORMED.has(rc)) return unknown(`${said} (the status request was turned away)`);
      return { kind: 'refused', reason: said };
    default:
      return unknown(`unexpected answer: status ${JSON.stringify(data.status ?? null)} ${said}`.trim());
  }
}

async function postJson(url: string, body: unknown, signal: AbortSignal): Promise<{ data: Data } | { failure: string }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
      // A redirect is no answer of the API (and following it would send the order elsewhere): unknown.
      redirect: 'manual',
    });
  } catch (error) {
    return { failure: `no answer: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    return { failure: `HTTP ${response.status}` };
  }
  try {
    const parsed: unknown = await response.json();
    const data = isRecord(parsed) ? parsed.data : undefined;
    return isRecord(data) ? { data } : { failure: 'answer without data' };
  } catch (error) {
    return { failure: `unreadable answer: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export const digiflazzAdapter: AdapterFactory = (provider) => {
  const base = provider.baseUrl.replace(/\/+$/, '');
  const credential = (name: string) => {
    const value = provider.credentials[name];
    if (!value) throw new Error(`digiflazz credential ${name} is missing`);
    return value;
  };

  /**
   * One transaction request: the send, and also the status query, which Digiflazz documents as the same request
   * with the same ref_id (it answers the existing transaction). Digiflazz has no "never received" answer: a status
   * query of a ref_id it never got creates the transaction then, which is acceptable as it is the same reference
   * (one delivery at most per ref_id).
   */
  async function transaction(order: SupplierOrder, signal: AbortSignal, phase: Phase): Promise<SupplierOutcome> {
    // Digiflazz has no quantity: such an order is never sent, so a status query has nothing to ask either.
    if (order.quantity > 1) return { kind: 'refused', reason: 'quantity above 1 is not supported by digiflazz' };
    try {
      const username = credential('username');
      const answer = await postJson(
        `${base}/v1/transaction`,
        {
          username,
          buyer_sku_code: order.productCode,
          customer_no: customerNo(order),
          ref_id: order.reference,
          sign: md5(username + credential('api_key') + order.reference),
        },
        signal,
      );
      return 'failure' in answer ? unknown(answer.failure) : outcomeOf(answer.data, order.reference, phase);
    } catch (error) {
      return unknown(error instanceof Error ? error.message : String(error));
    }
  }

  return {
    send: (order, signal) => transaction(order, signal, 'send'),
    status: (order, signal) => transaction(order, signal, 'status'),

    verifyCallback: ({ headers, body }) => {
      const secret = provider.credentials.webhook_secret;
      if (!secret) return null;
      const presented = Buffer.from(headers.get('x-hub-signature') ?? '');
      const expected = Buffer.from(`sha1=${createHmac('sha1', secret).update(body, 'utf8').digest('hex')}`);
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return null;
      }
      const data = isRecord(parsed) ? parsed.data : undefined;
      if (!isRecord(data) || typeof data.ref_id !== 'string' || data.ref_id === '') return null;
      return { reference: data.ref_id, outcome: outcomeOf(data, data.ref_id, 'callback') };
    },

    balance: async (signal) => {
      const username = credential('username');
      const answer = await postJson(`${base}/v1/cek-saldo`, { cmd: 'deposit', username, sign: md5(username + credential('api_key') + 'depo') }, signal);
      if ('failure' in answer) throw new Error(`digiflazz balance: ${answer.failure}`);
      const deposit = answer.data.deposit;
      if (typeof deposit !== 'number' || !Number.isFinite(deposit)) {
        throw new Error(`digiflazz balance: ${`${text(answer.data.rc)} ${text(answer.data.message)}`.trim() || 'no deposit in the answer'}`);
      }
      return String(deposit);
    },
  };
};
