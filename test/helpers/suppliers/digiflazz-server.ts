/**
 * A local Digiflazz-compatible buyer API on 127.0.0.1, written from developer.digiflazz.com (API Transaksi › Buyer:
 * Topup, Cek Saldo, Response Code, Webhooks), for tests of the Digiflazz adapter:
 *
 * - `POST /v1/transaction` `{username, buyer_sku_code, customer_no, ref_id, sign}`, `sign = md5(username + apiKey +
 *   ref_id)`: a new ref_id makes a transaction; the same ref_id again answers that transaction's status (the
 *   documented status check) and never delivers twice; the same ref_id with another SKU or customer_no is rc 49.
 * - `POST /v1/cek-saldo` `{cmd: "deposit", username, sign = md5(username + apiKey + "depo")}` → `{data: {deposit}}`.
 * - Webhook: when a pending transaction ends and `callbackUrl` is set, POSTs `{data: {...}}` there with
 *   `X-Hub-Signature: sha1=<hex HMAC-SHA1(webhookSecret, body)>` and `X-Digiflazz-Event: update`.
 *
 * Answers are `{data: {...}}` with HTTP 200, failures included (`status: "Gagal"` and an rc). It keeps a ledger of
 * what it delivered. Deterministic (serial numbers count up) and bounded: close() clears every timer and aborts
 * callbacks in flight.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outgoingRequests } from './outgoing.js';

export type DigiflazzMode =
  /** Sukses at once. */
  | 'deliver'
  /** Pending, ended `completeAfterMs` later as `pendingThen` says, then the callback(s) if `callbackUrl` is set. */
  | 'pending'
  /** Gagal with `refuseRc`. */
  | 'refuse'
  /** HTTP 500; nothing is done. */
  | 'error500'
  /** Does what the request asks (delivers a new ref_id), then destroys the socket without answering. */
  | 'dropAfterDelivering'
  /** Does what the request asks (delivers a new ref_id), answers `slowMs` later. */
  | 'slow';

export type DigiflazzSettings = {
  mode: DigiflazzMode;
  completeAfterMs: number;
  /** How a pending transaction ends. */
  pendingThen: 'deliver' | 'refuse';
  /** The rc of a refusal (the message is the documented one). */
  refuseRc: string;
  slowMs: number;
  /** Where the webhook posts (none: no callback). */
  callbackUrl?: string;
  callbackTwice: boolean;
  callbackDelayMs: number;
  /** Callbacks signed with another key. */
  badSignature: boolean;
  /** What one delivery costs (taken from the deposit). */
  price: number;
};

/** The global settings (change them at any time), and `queue`: per-call overrides, one taken by each transaction request. */
export type DigiflazzBehaviour = DigiflazzSettings & { queue: Partial<DigiflazzSettings>[] };

export type DigiflazzTransaction = {
  ref_id: string;
  customer_no: string;
  buyer_sku_code: string;
  message: string;
  status: 'Sukses' | 'Pending' | 'Gagal';
  rc: string;
  sn: string;
  buyer_last_saldo: number;
  price: number;
};

export type DigiflazzLedger = {
  /** What was delivered, per ref_id. */
  deliveries: Map<string, { sku: string; customer_no: string; at: Date }>;
  /** How many times each ref_id was delivered (must never exceed 1). */
  deliveryCounts: Map<string, number>;
  /** Every transaction Digiflazz formed, as it stands. */
  transactions: Map<string, DigiflazzTransaction>;
  /** Every request received, in order (path and parsed body). */
  requests: { path: string; body: unknown }[];
};

export type SentCallback = { url: string; headers: Record<string, string>; body: string; answer: number | string };

export type DigiflazzServerOptions = {
  username?: string;
  apiKey?: string;
  webhookSecret?: string;
  deposit?: number;
  behaviour?: Partial<DigiflazzSettings>;
};

/** Response codes of the Response Code page used here. */
const MESSAGES: Record<string, string> = {
  '00': 'Transaksi Sukses',
  '02': 'Transaksi Gagal',
  '03': 'Transaksi Pending',
  '40': 'Payload Error',
  '41': 'Signature Anda salah',
  '42': 'Gagal memproses API Buyer',
  '43': 'SKU tidak di temukan atau Non-Aktif',
  '44': 'Saldo tidak cukup',
  '49': 'Ref ID tidak unik',
  '53': 'Produk Seller Sedang Tidak Tersedia',
  '54': 'Nomor Tujuan Salah',
  '55': 'Produk Sedang Gangguan',
  '68': 'Stok habis',
};
/** "Transaksi Terbentuk: Tidak": such a refusal keeps no transaction, so the ref_id stays free. */
const NOT_FORMED = new Set(['40', '41', '42', '43', '44', '45', '47', '49', '56', '61', '62', '63', '64', '65', '66', '67', '68', '69', '80', '81', '82', '83', '87', '88']);

const md5 = (value: string) => createHash('md5').update(value, 'utf8').digest('hex');

export async function startDigiflazzServer(options: DigiflazzServerOptions = {}) {
  const username = options.username ?? 'store-user';
  const apiKey = options.apiKey ?? 'dev-api-key';
  const webhookSecret = options.webhookSecret ?? 'webhook-secret';
  let deposit = options.deposit ?? 1_000_000;
  let serial = 0;
  let deliveryId = 0;
  const timers = new Set<NodeJS.Timeout>();
  const aborts = outgoingRequests();

  const behaviour: DigiflazzBehaviour = {
    mode: 'deliver',
    completeAfterMs: 50,
    pendingThen: 'deliver',
    refuseRc: '54',
    slowMs: 500,
    callbackTwice: false,
    callbackDelayMs: 0,
    badSignature: false,
    price: 10_000,
    ...options.behaviour,
    queue: [],
  };
  const ledger: DigiflazzLedger = { deliveries: new Map(), deliveryCounts: new Map(), transactions: new Map(), requests: [] };
  const sentCallbacks: SentCallback[] = [];

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  function deliver(tx: DigiflazzTransaction) {
    ledger.deliveries.set(tx.ref_id, { sku: tx.buyer_sku_code, customer_no: tx.customer_no, at: new Date() });
    ledger.deliveryCounts.set(tx.ref_id, (ledger.deliveryCounts.get(tx.ref_id) ?? 0) + 1);
    deposit -= tx.price;
    serial += 1;
    Object.assign(tx, { status: 'Sukses', rc: '00', message: MESSAGES['00'], sn: `SN${String(serial).padStart(8, '0')}`, buyer_last_saldo: deposit });
  }

  const fail = (tx: DigiflazzTransaction, rc: string) =>
    Object.assign(tx, { status: 'Gagal', rc, message: MESSAGES[rc] ?? MESSAGES['02'], sn: '', buyer_last_saldo: deposit });

  function sendCallbacks(tx: DigiflazzTransaction, settings: DigiflazzSettings) {
    const url = settings.callbackUrl;
    if (!url) return;
    const body = JSON.stringify({ data: tx });
    const key = settings.badSignature ? `${webhookSecret}-wrong` : webhookSecret;
    for (let copy = 0; copy < (settings.callbackTwice ? 2 : 1); copy += 1) {
      later(settings.callbackDelayMs, () => {
        deliveryId += 1;
        const headers = {
          'content-type': 'application/json',
          'user-agent': 'Digiflazz-Hookshot',
          'x-digiflazz-event': 'update',
          'x-digiflazz-delivery': `delivery-${deliveryId}`,
          'x-hub-signature': `sha1=${createHmac('sha1', key).update(body, 'utf8').digest('hex')}`,
        };
        const sent: SentCallback = { url, headers, body, answer: 'in flight' };
        sentCallbacks.push(sent);
        fetch(url, { method: 'POST', headers, body, signal: aborts.signal })
          .then(async (response) => {
            await response.body?.cancel().catch(() => {});
            sent.answer = response.status;
          })
          .catch((error: unknown) => {
            sent.answer = error instanceof Error ? error.message : String(error);
          });
      });
    }
  }

  /** Handles a transaction request (forming, delivering or failing a transaction) and returns its answer's data. */
  function transaction(body: Record<string, unknown>, settings: DigiflazzSettings): Record<string, unknown> {
    const field = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    const [user, sku, customer, ref, sign] = ['username', 'buyer_sku_code', 'customer_no', 'ref_id', 'sign'].map(field);
    const refusal = (rc: string) => ({ ref_id: ref ?? '', customer_no: customer ?? '', buyer_sku_code: sku ?? '', message: MESSAGES[rc], status: 'Gagal', rc, sn: '', buyer_last_saldo: deposit, price: 0 });
    if (!user || !sku || !customer || !ref || !sign) return refusal('40');
    if (user !== username) return refusal('42');
    if (sign !== md5(username + apiKey + ref)) return refusal('41');

    const existing = ledger.transactions.get(ref);
    if (existing) return existing.buyer_sku_code === sku && existing.customer_no === customer ? { ...existing } : refusal('49');

    const tx: DigiflazzTransaction = { ref_id: ref, customer_no: customer, buyer_sku_code: sku, message: '', status: 'Pending', rc: '03', sn: '', buyer_last_saldo: deposit, price: settings.price };
    if (settings.mode === 'refuse' && NOT_FORMED.has(settings.refuseRc)) return refusal(settings.refuseRc);
    if (settings.mode !== 'refuse' && deposit < settings.price) return refusal('44');
    ledger.transactions.set(ref, tx);
    if (settings.mode === 'refuse') {
      fail(tx, settings.refuseRc);
    } else if (settings.mode === 'pending') {
      tx.message = MESSAGES['03']!;
      later(settings.completeAfterMs, () => {
        if (settings.pendingThen === 'deliver') deliver(tx);
        else fail(tx, settings.refuseRc);
        sendCallbacks(tx, settings);
      });
    } else {
      deliver(tx);
    }
    return { ...tx };
  }

  function answer(res: ServerResponse, data: Record<string, unknown>) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const path = req.url ?? '';
    ledger.requests.push({ path, body });
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};

    if (req.method === 'POST' && path === '/v1/cek-saldo') {
      if (fields.cmd !== 'deposit' || fields.username !== username || fields.sign !== md5(username + apiKey + 'depo')) {
        answer(res, { rc: '41', message: MESSAGES['41'] });
      } else {
        answer(res, { deposit });
      }
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/transaction') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }

    const settings: DigiflazzSettings = { ...behaviour, ...behaviour.queue.shift() };
    if (settings.mode === 'error500') {
      res.writeHead(500, { 'content-type': 'text/html' }).end('<html>Internal Server Error</html>');
      return;
    }
    const data = transaction(fields, settings);
    if (settings.mode === 'dropAfterDelivering') {
      req.socket.destroy();
    } else if (settings.mode === 'slow') {
      later(settings.slowMs, () => {
        if (!res.destroyed) answer(res, data);
      });
    } else {
      answer(res, data);
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ledger,
    behaviour,
    sentCallbacks,
    credentials: { username, api_key: apiKey, webhook_secret: webhookSecret },
    deposit: () => deposit,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      aborts.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type DigiflazzServer = Awaited<ReturnType<typeof startDigiflazzServer>>;
