import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { signHttpBody, verifyHttpSignature } from '../../../src/modules/suppliers/adapters/http.js';
import { outgoingRequests } from './outgoing.js';

/**
 * A local supplier that speaks the store's `http` protocol (DESIGN C22), written from the protocol rather than
 * from the adapter (only the signing rule is shared). It keeps its own ledger of what it delivered, so a test
 * can tell what a customer actually got, whatever the store believes.
 *
 * - `deliver`: delivers, answers 200 completed.
 * - `pending`: answers 202, delivers `completeAfterMs` later (or, with `pendingThen: 'refuse'`, refuses then and
 *   delivers nothing), then (with `callbackUrl`) POSTs the signed callback `callbackDelayMs` after that, twice with
 *   `callbackTwice`, signed with a wrong key with `badSignature`.
 * - `refuse`: answers `refuseStatus` (422) refused; nothing delivered, the reference remembered as refused.
 * - `error500`: answers 500 and forgets the reference (a status query then says 404).
 * - `error500AfterDelivering`: delivers, then answers 500 (an outcome that may have delivered: it did).
 * - `dropAfterDelivering`: delivers, then cuts the connection without an answer.
 * - `slow`: delivers on receipt, answers `slowMs` later.
 * - `down`: destroys every connection before reading it: nothing recorded.
 *
 * Player checks (C27) answer `{valid: true, nickname}` for a first field value in `players`, `{valid: false, reason}`
 * otherwise, `playerCheckDelayMs` after they arrive.
 *
 * Status queries answer the reference's status, or `404 {"status":"not_found"}` for a reference it never received;
 * with `statusMode: 'html404'` (a proxy's page, a moved URL) every status query gets an HTML 404 instead.
 *
 * Idempotent by reference: a POST of a reference it already has answers that reference's current status and
 * delivers nothing (the mode applies to new references only).
 */

export type SupplierMode = 'deliver' | 'pending' | 'refuse' | 'error500' | 'error500AfterDelivering' | 'dropAfterDelivering' | 'slow' | 'down';

export type ModeSettings = {
  mode: SupplierMode;
  statusMode: 'answer' | 'html404';
  pendingThen: 'deliver' | 'refuse';
  completeAfterMs: number;
  callbackUrl?: string;
  callbackTwice: boolean;
  callbackDelayMs: number;
  badSignature: boolean;
  slowMs: number;
  refuseStatus: 409 | 422;
  refuseReason: string;
  /** How long a player check (C27) waits before it answers. */
  playerCheckDelayMs: number;
};

/** The global settings, and per product_code overrides of any of them. Change either at run time. */
export type SupplierBehaviour = ModeSettings & { products: Record<string, Partial<ModeSettings>> };

export type Delivery = { productCode: string; fields: Record<string, string>; destination?: string; quantity: number; at: number };

export type LedgerEntry = {
  reference: string;
  productCode: string;
  fields: Record<string, string>;
  /** The route's destination, when the store sent one. */
  destination?: string;
  quantity: number;
  receivedAt: number;
  status: 'pending' | 'completed' | 'refused';
  providerReference: string;
  reason?: string;
  refuseStatus?: 409 | 422;
  /** How many times this reference was delivered: a correct supplier (and store) keep it at most 1. */
  deliveries: number;
  delivered?: Delivery;
  /** A pending order's end (delivered or refused, as its settings say), at once; nothing once it has ended. */
  finish?: () => void;
};

export type CallbackAttempt = { reference: string; body: string; status?: number; error?: string };

export type HttpSupplierOptions = {
  secret: string;
  behaviour?: Partial<SupplierBehaviour>;
  /** Settings for one new order, over the others (a mix of answers at random, say). */
  modeFor?: (reference: string) => Partial<ModeSettings> | undefined;
  /** The store's starting balance (decimal string), lowered by `price` at each delivery. */
  balance?: string;
  price?: string;
};

export type HttpSupplier = Awaited<ReturnType<typeof startHttpSupplier>>;

const DEFAULTS: ModeSettings = {
  mode: 'deliver',
  statusMode: 'answer',
  pendingThen: 'deliver',
  completeAfterMs: 50,
  callbackTwice: false,
  callbackDelayMs: 0,
  badSignature: false,
  slowMs: 1_000,
  refuseStatus: 422,
  refuseReason: 'product out of stock',
  playerCheckDelayMs: 0,
};

export async function startHttpSupplier(options: HttpSupplierOptions) {
  const { secret } = options;
  const behaviour: SupplierBehaviour = { ...DEFAULTS, products: {}, ...options.behaviour };
  const ledger = new Map<string, LedgerEntry>();
  const callbacks: CallbackAttempt[] = [];
  /** When each status query arrived, by reference. */
  const statusQueryTimes = new Map<string, number[]>();
  const places = Math.max(decimals(options.balance ?? '1000.00'), decimals(options.price ?? '0'));
  let balanceUnits = toUnits(options.balance ?? '1000.00');
  const priceUnits = toUnits(options.price ?? '0');
  let received = 0;
  let statusQueries = 0;
  let playerChecks = 0;
  const playerCheckBodies: Array<{ productCode: string; fields: Record<string, string> }> = [];
  const players = new Map<string, string>();
  let sequence = 0;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const outgoing = outgoingRequests();

  const settingsFor = (productCode: string): ModeSettings => {
    const { products, ...global } = behaviour;
    return { ...global, ...products[productCode] };
  };

  const schedule = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) run();
    }, ms);
    timers.add(timer);
  };

  // Counted even when it should not happen, so that a test sees a double delivery rather than this hiding it.
  const deliver = (entry: LedgerEntry) => {
    entry.deliveries += 1;
    entry.status = 'completed';
    entry.delivered ??= { productCode: entry.productCode, fields: entry.fields, destination: entry.destination, quantity: entry.quantity, at: Date.now() };
    balanceUnits -= priceUnits;
  };

  const statusBody = (entry: LedgerEntry) => ({
    reference: entry.reference,
    status: entry.status,
    provider_reference: entry.providerReference,
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
  });

  /** The answer to a POST of a reference the supplier already has: its current status. */
  const currentAnswer = (entry: LedgerEntry): [number, object] => {
    if (entry.status === 'completed') return [200, statusBody(entry)];
    if (entry.status === 'refused') return [entry.refuseStatus ?? 422, statusBody(entry)];
    return [202, statusBody(entry)];
  };

  async function postCallback(entry: LedgerEntry, settings: ModeSettings) {
    const body = JSON.stringify(statusBody(entry));
    const headers = signHttpBody(settings.badSignature ? `${secret}-not-the-key` : secret, body);
    try {
      const response = await fetch(settings.callbackUrl!, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
        signal: outgoing.signal,
        redirect: 'manual',
      });
      await response.arrayBuffer();
      callbacks.push({ reference: entry.reference, body, status: response.status });
    } catch (err) {
      callbacks.push({ reference: entry.reference, body, error: err instanceof Error ? err.message : String(err) });
    }
  }

  function placeOrder(req: IncomingMessage, res: ServerResponse, raw: string) {
    let order: { reference: string; productCode: string; fields: Record<string, string>; quantity: number };
    try {
      order = parseOrder(JSON.parse(raw));
    } catch {
      return answer(res, 400, { error: 'not an order' });
    }
    if (req.headers['idempotency-key'] !== order.reference) return answer(res, 400, { error: 'Idempotency-Key is not the reference' });
    const existing = ledger.get(order.reference);
    if (existing) return answer(res, ...currentAnswer(existing));
    const settings = { ...settingsFor(order.productCode), ...options.modeFor?.(order.reference) };
    if (settings.mode === 'down') return void req.socket.destroy();
    // Recorded on receipt, before anything else: a status query for a reference it has begun never says 404.
    const entry: LedgerEntry = {
      ...order,
      receivedAt: Date.now(),
      status: 'pending',
      providerReference: `SUP-${++sequence}`,
      deliveries: 0,
    };
    ledger.set(order.reference, entry);
    switch (settings.mode) {
      case 'deliver':
        deliver(entry);
        return answer(res, 200, statusBody(entry));
      case 'pending':
        entry.finish = () => {
          // Finished once: by its timer, or sooner by `finishPending`; not at all once cancelled.
          if (entry.status !== 'pending') return;
          if (settings.pendingThen === 'refuse') {
            entry.status = 'refused';
            entry.reason = settings.refuseReason;
          } else deliver(entry);
          if (!settings.callbackUrl) return;
          schedule(settings.callbackDelayMs, () => {
            void (async () => {
              await postCallback(entry, settings);
              if (settings.callbackTwice && !closed) await postCallback(entry, settings);
            })();
          });
        };
        schedule(settings.completeAfterMs, () => entry.finish?.());
        return answer(res, 202, { status: 'pending', provider_reference: entry.providerReference });
      case 'refuse':
        entry.status = 'refused';
        entry.reason = settings.refuseReason;
        entry.refuseStatus = settings.refuseStatus;
        return answer(res, settings.refuseStatus, { status: 'refused', reason: settings.refuseReason });
      case 'error500':
        ledger.delete(order.reference);
        return answer(res, 500, { error: 'internal error' });
      case 'error500AfterDelivering':
        deliver(entry);
        return answer(res, 500, { error: 'internal error' });
      case 'dropAfterDelivering':
        deliver(entry);
        return void req.socket.destroy();
      case 'slow':
        deliver(entry);
        return schedule(settings.slowMs, () => answer(res, 200, statusBody(entry)));
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    const path = new URL(req.url ?? '/', 'http://supplier').pathname;
    const signed = verifyHttpSignature(secret, raw, header(req, 'x-signature'), header(req, 'x-timestamp'));
    if (req.method === 'POST' && path === '/orders') {
      received += 1;
      return signed ? placeOrder(req, res, raw) : answer(res, 401, { error: 'bad signature' });
    }
    const statusOf = /^\/orders\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && statusOf) {
      statusQueries += 1;
      if (!signed) return answer(res, 401, { error: 'bad signature' });
      const reference = decodeURIComponent(statusOf[1]!);
      statusQueryTimes.set(reference, [...(statusQueryTimes.get(reference) ?? []), Date.now()]);
      const entry = ledger.get(reference);
      if (settingsFor(entry?.productCode ?? '').statusMode === 'html404') return answerHtml(res, 404, '<html><body><h1>404 Not Found</h1></body></html>');
      return entry ? answer(res, 200, statusBody(entry)) : answer(res, 404, { status: 'not_found' });
    }
    if (req.method === 'POST' && path === '/players/check') {
      playerChecks += 1;
      if (!signed) return answer(res, 401, { error: 'bad signature' });
      const { product_code: productCode, fields } = JSON.parse(raw) as { product_code: string; fields: Record<string, string> };
      playerCheckBodies.push({ productCode, fields });
      const id = Object.values(fields)[0] ?? '';
      const nickname = players.get(id);
      const body = nickname === undefined ? { valid: false, reason: 'No player with this id.' } : { valid: true, nickname };
      return schedule(behaviour.playerCheckDelayMs, () => answer(res, 200, body));
    }
    if (req.method === 'GET' && path === '/balance') {
      if (!signed) return answer(res, 401, { error: 'bad signature' });
      return answer(res, 200, { balance: fromUnits(balanceUnits, places) });
    }
    return answer(res, 404, { error: 'not found' });
  }

  const server = createServer((req, res) => {
    // A kept-alive connection opened before the supplier went down: cut it too, unread.
    if (behaviour.mode === 'down') return void req.socket.destroy();
    res.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket: Socket) => {
    if (behaviour.mode === 'down') return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));

  return {
    /** The provider's base_url. */
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ledger,
    behaviour,
    /** Every callback it POSTed, with the answer it got. */
    callbacks,
    statusQueryTimes,
    /** POSTs of orders it received (signed or not, new or repeated). */
    get received() {
      return received;
    },
    /** The players it knows (C27): the first order field's value → nickname. */
    players,
    /** The player checks it received (signed or not), and what the signed ones asked. */
    get playerChecks() {
      return playerChecks;
    },
    playerCheckBodies,
    /** Status queries it received. */
    get statusQueries() {
      return statusQueries;
    },
    /** The store's current balance with it, as GET /balance answers. */
    get balance() {
      return fromUnits(balanceUnits, places);
    },
    /** How many deliveries it made, over every reference. */
    get deliveries() {
      let total = 0;
      for (const entry of ledger.values()) total += entry.deliveries;
      return total;
    },
    /**
     * An operator asks the supplier to cancel `reference`: refused for good unless it was delivered already (false then).
     * A reference it never received is remembered as refused, so a request still on its way delivers nothing.
     */
    cancel: (reference: string): boolean => {
      const entry = ledger.get(reference);
      if (entry?.status === 'completed') return false;
      const refused: LedgerEntry = entry ?? {
        reference,
        productCode: '',
        fields: {},
        quantity: 1,
        receivedAt: Date.now(),
        status: 'refused',
        providerReference: `SUP-${++sequence}`,
        deliveries: 0,
      };
      refused.status = 'refused';
      refused.reason = 'cancelled at the operator\'s request';
      ledger.set(reference, refused);
      return true;
    },
    /** Ends a pending order now, as its timer would have. */
    finishPending: (reference: string) => ledger.get(reference)?.finish?.(),
    close: async () => {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      outgoing.abort();
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(res: ServerResponse, status: number, body: object) {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

function answerHtml(res: ServerResponse, status: number, html: string) {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(html) }).end(html);
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function parseOrder(json: unknown) {
  const body = json as { reference?: unknown; product_code?: unknown; fields?: unknown; destination?: unknown; quantity?: unknown };
  const fields = body?.fields;
  if (
    typeof body?.reference !== 'string' ||
    body.reference === '' ||
    typeof body.product_code !== 'string' ||
    typeof fields !== 'object' ||
    fields === null ||
    Array.isArray(fields) ||
    !Object.values(fields).every((value) => typeof value === 'string') ||
    !Number.isInteger(body.quantity) ||
    (body.quantity as number) < 1 ||
    (body.destination !== undefined && typeof body.destination !== 'string')
  ) {
    throw new Error('not an order');
  }
  return {
    reference: body.reference,
    productCode: body.product_code,
    fields: fields as Record<string, string>,
    ...(body.destination === undefined ? {} : { destination: body.destination as string }),
    quantity: body.quantity as number,
  };
}

// Money as integer ten-thousandths, so that the balance never drifts.
const SCALE = 4;

function decimals(value: string): number {
  return Math.max(value.split('.')[1]?.length ?? 0, 0);
}

function toUnits(value: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(value);
  if (!match) throw new Error(`not a decimal with at most ${SCALE} places: ${value}`);
  const units = BigInt(match[2]!) * 10n ** BigInt(SCALE) + BigInt((match[3] ?? '').padEnd(SCALE, '0'));
  return match[1] ? -units : units;
}

function fromUnits(units: bigint, places: number): string {
  const abs = units < 0n ? -units : units;
  const whole = abs / 10n ** BigInt(SCALE);
  const fraction = (abs % 10n ** BigInt(SCALE)).toString().padStart(SCALE, '0').slice(0, places);
  return `${units < 0n ? '-' : ''}${whole}${places > 0 ? `.${fraction}` : ''}`;
}
