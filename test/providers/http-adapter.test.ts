import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { httpAdapter, signHttpBody } from '../../src/modules/suppliers/adapters/http.js';
import type { CallbackRequest, SupplierAdapter, SupplierOrder } from '../../src/modules/suppliers/adapters/types.js';
import { startHttpSupplier, type HttpSupplier, type SupplierBehaviour } from '../helpers/suppliers/http-supplier.js';

/** The `http` supplier protocol (C22), adapter against a local supplier that keeps its own ledger. No database. */
const SECRET = 'supplier-secret-0123456789';
let supplier: HttpSupplier;
let adapter: SupplierAdapter;
let sequence = 0;

const order = (productCode = 'ML-86', destination: string | null = null): SupplierOrder => ({
  reference: `UTR-${process.pid}-${++sequence}`,
  productCode,
  fields: [
    { name: 'player_id', label: 'Player id', type: 'text', value: '777' },
    { name: 'zone', label: 'Zone', type: 'text', value: '2101' },
  ],
  destination,
  quantity: 1,
});
const signal = () => AbortSignal.timeout(5_000);
const adapterFor = (secret = SECRET, baseUrl = supplier.url) => httpAdapter({ id: 1, baseUrl, credentials: { secret } });

/** The store's callback endpoint, as far as the adapter is concerned: it keeps each callback's raw request. */
let callbackServer: Server;
let callbackUrl: string;
const callbacks: CallbackRequest[] = [];

beforeAll(async () => {
  supplier = await startHttpSupplier({ secret: SECRET, balance: '100.00', price: '2.50' });
  adapter = adapterFor();
  callbackServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      callbacks.push({ headers: headersOf(req.headers), body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callbacks/providers/1`;
});
afterAll(async () => {
  await supplier?.close();
  await new Promise((resolve) => callbackServer?.close(resolve));
});
afterEach(() => {
  // Back to a supplier that delivers, for the next test.
  const defaults: Partial<SupplierBehaviour> = { mode: 'deliver', completeAfterMs: 50, callbackDelayMs: 0, callbackUrl: undefined, callbackTwice: false, badSignature: false, refuseStatus: 422, products: {} };
  Object.assign(supplier.behaviour, defaults);
  callbacks.length = 0;
});

const headersOf = (headers: IncomingHttpHeaders) => {
  const result = new Headers();
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) result.set(name, Array.isArray(value) ? value.join(',') : value);
  return result;
};

describe('send: each answer maps to one outcome', () => {
  it('deliver → completed, delivered once with what was asked', async () => {
    const o = order();
    const outcome = await adapter.send(o, signal());
    expect(outcome).toEqual({ kind: 'completed', providerReference: expect.stringMatching(/^SUP-/) });
    const entry = supplier.ledger.get(o.reference)!;
    expect(entry.deliveries).toBe(1);
    // The form's labels and values, in the form's order.
    expect(entry.delivered).toMatchObject({ productCode: 'ML-86', fields: { 'Player id': '777', Zone: '2101' }, quantity: 1 });
    expect(Object.keys(entry.delivered!.fields)).toEqual(['Player id', 'Zone']);
    expect(entry.destination).toBeUndefined();
    expect(await adapter.status(o, signal())).toEqual(outcome);
  });

  it("sends the route's destination when it has one", async () => {
    const o = order('ML-86', '7772101');
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'completed' });
    expect(supplier.ledger.get(o.reference)!.destination).toBe('7772101');
  });

  it('pending → pending, then status says completed once the supplier has delivered', async () => {
    supplier.behaviour.mode = 'pending';
    supplier.behaviour.completeAfterMs = 50;
    const o = order();
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'pending' });
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'pending' });
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(0);
    await vi.waitFor(async () => expect(await adapter.status(o, signal())).toMatchObject({ kind: 'completed' }), { timeout: 2_000 });
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
  });

  it('refuse (422) → refused with the reason; nothing delivered, and status says refused', async () => {
    supplier.behaviour.mode = 'refuse';
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'refused', reason: 'product out of stock' });
    expect(supplier.ledger.get(o.reference)).toMatchObject({ status: 'refused', deliveries: 0 });
    expect(supplier.ledger.get(o.reference)!.delivered).toBeUndefined();
    expect(await adapter.status(o, signal())).toEqual({ kind: 'refused', reason: 'product out of stock' });
  });

  it('409 refused → refused', async () => {
    supplier.behaviour.mode = 'refuse';
    supplier.behaviour.refuseStatus = 409;
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'refused', reason: 'product out of stock' });
    // Sent again: the supplier answers its current status, the same 409 refusal.
    expect(await adapter.send(o, signal())).toEqual({ kind: 'refused', reason: 'product out of stock' });
  });

  it('error500 → unknown naming the status; the supplier remembers nothing, so status says never received', async () => {
    supplier.behaviour.mode = 'error500';
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'unknown', reason: expect.stringContaining('500') });
    expect(supplier.ledger.has(o.reference)).toBe(false);
    expect(await adapter.status(o, signal())).toEqual({ kind: 'refused', reason: 'never received by the provider' });
  });

  it('dropAfterDelivering → unknown; status then says completed, and it was delivered once', async () => {
    supplier.behaviour.mode = 'dropAfterDelivering';
    const o = order();
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'unknown' });
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'completed' });
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
  });

  it('slow past the timeout → unknown, though the ledger shows the delivery', async () => {
    supplier.behaviour.mode = 'slow';
    supplier.behaviour.slowMs = 1_000;
    const o = order();
    expect(await adapter.send(o, AbortSignal.timeout(50))).toEqual({ kind: 'unknown', reason: 'timed out' });
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'completed' });
  });

  it('down → unknown; nothing received, nothing recorded', async () => {
    const before = supplier.received;
    supplier.behaviour.mode = 'down';
    const o = order();
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'unknown', reason: expect.stringMatching(/^no answer/) });
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'unknown' });
    expect(supplier.received).toBe(before);
    expect(supplier.ledger.has(o.reference)).toBe(false);
  });

  it('behaviour per product_code overrides the global one', async () => {
    supplier.behaviour.products['PUBG-60'] = { mode: 'refuse', refuseReason: 'region closed' };
    expect(await adapter.send(order('PUBG-60'), signal())).toEqual({ kind: 'refused', reason: 'region closed' });
    expect(await adapter.send(order('ML-86'), signal())).toMatchObject({ kind: 'completed' });
  });

  it('a wrong secret is refused by the supplier (401): unknown, nothing recorded', async () => {
    const o = order();
    const before = supplier.received;
    expect(await adapterFor('not-the-supplier-secret').send(o, signal())).toEqual({ kind: 'unknown', reason: 'HTTP 401' });
    expect(supplier.received).toBe(before + 1);
    expect(supplier.ledger.has(o.reference)).toBe(false);
    expect(await adapterFor('not-the-supplier-secret').status(o, signal())).toEqual({ kind: 'unknown', reason: 'HTTP 401' });
  });

  it('a base_url with a trailing slash works the same', async () => {
    expect(await adapterFor(SECRET, `${supplier.url}/`).send(order(), signal())).toMatchObject({ kind: 'completed' });
  });

  it('a secret shorter than 16 characters sends nothing', async () => {
    const before = supplier.received;
    expect(await adapterFor('short').send(order(), signal())).toMatchObject({ kind: 'refused' });
    expect(supplier.received).toBe(before);
  });
});

describe('answers outside the protocol are unknown', () => {
  let odd: Server;
  let oddUrl: string;
  let reply: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '' };
  beforeAll(async () => {
    odd = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(reply.status, reply.headers ?? { 'Content-Type': 'application/json' }).end(reply.body));
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => odd?.close(resolve)));

  it.each([
    [200, JSON.stringify({ status: 'pending' }), 'HTTP 200 saying pending'],
    [202, JSON.stringify({ status: 'completed' }), 'HTTP 202 saying completed'],
    [200, 'OK', 'HTTP 200 (unreadable body)'],
    [409, '', 'HTTP 409 (unreadable body)'],
    [422, JSON.stringify({ error: 'bad field' }), 'HTTP 422'],
    [503, JSON.stringify({ status: 'refused' }), 'HTTP 503 saying refused'],
    [200, JSON.stringify({ status: 'completed', reference: 'someone-else' }), 'HTTP 200 about another reference'],
  ])('send answered %i %s → unknown', async (status, body, reason) => {
    reply = { status, body };
    expect(await adapterFor(SECRET, oddUrl).send(order(), signal())).toEqual({ kind: 'unknown', reason });
  });

  it('a redirect is not followed: unknown', async () => {
    reply = { status: 307, body: '', headers: { Location: `${supplier.url}/orders` } };
    const before = supplier.received;
    expect(await adapterFor(SECRET, oddUrl).send(order(), signal())).toEqual({ kind: 'unknown', reason: 'HTTP 307 (unreadable body)' });
    expect(supplier.received).toBe(before);
  });

  it('status: only 200 with a status, or 404 {"status":"not_found"}, says anything', async () => {
    reply = { status: 404, body: JSON.stringify({ status: 'not_found' }) };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toEqual({ kind: 'refused', reason: 'never received by the provider' });
    // A proxy's page or a moved URL says nothing of the order.
    reply = { status: 404, body: '<html><body><h1>404 Not Found</h1></body></html>' };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toEqual({ kind: 'unknown', reason: 'HTTP 404 (unreadable body)' });
    reply = { status: 404, body: JSON.stringify({ error: 'no route' }) };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toMatchObject({ kind: 'unknown' });
    reply = { status: 404, body: '' };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toMatchObject({ kind: 'unknown' });
    reply = { status: 500, body: JSON.stringify({ status: 'refused' }) };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toMatchObject({ kind: 'unknown' });
    reply = { status: 200, body: JSON.stringify({ status: 'lost' }) };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toMatchObject({ kind: 'unknown' });
    reply = { status: 200, body: JSON.stringify({ status: 'refused' }) };
    expect(await adapterFor(SECRET, oddUrl).status(order(), signal())).toEqual({ kind: 'refused', reason: 'refused by the provider' });
  });

  it('a connection refused is unknown', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    expect(await adapterFor(SECRET, url).send(order(), signal())).toEqual({ kind: 'unknown', reason: expect.stringMatching(/^no answer: .*ECONNREFUSED/) });
  });
});

describe('status and the ledger', () => {
  it('an order never received → refused, never received by the provider', async () => {
    const before = supplier.statusQueries;
    expect(await adapter.status(order(), signal())).toEqual({ kind: 'refused', reason: 'never received by the provider' });
    expect(supplier.statusQueries).toBe(before + 1);
  });

  it('send + send + status delivers once: the supplier is idempotent by reference', async () => {
    const o = order();
    const first = await adapter.send(o, signal());
    const second = await adapter.send(o, signal());
    expect(second).toEqual(first);
    expect(await adapter.status(o, signal())).toEqual(first);
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
    for (const entry of supplier.ledger.values()) expect(entry.deliveries).toBeLessThanOrEqual(1);
  });

  it('a pending order sent again stays pending and is delivered once', async () => {
    supplier.behaviour.mode = 'pending';
    const o = order();
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'pending' });
    supplier.behaviour.mode = 'deliver';
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'pending' });
    await vi.waitFor(() => expect(supplier.ledger.get(o.reference)!.status).toBe('completed'), { timeout: 2_000 });
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'completed' });
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
  });
});

describe('callbacks', () => {
  async function pendingWithCallback(settings: Partial<SupplierBehaviour> = {}, count = 1) {
    Object.assign(supplier.behaviour, { mode: 'pending', completeAfterMs: 20, callbackDelayMs: 0, callbackUrl, ...settings });
    const o = order();
    expect(await adapter.send(o, signal())).toMatchObject({ kind: 'pending' });
    await vi.waitFor(() => expect(callbacks.length).toBe(count), { timeout: 2_000 });
    return { o, callback: callbacks[0]! };
  }

  it('a valid callback → its report', async () => {
    const { o, callback } = await pendingWithCallback();
    expect(adapter.verifyCallback(callback)).toEqual({
      reference: o.reference,
      outcome: { kind: 'completed', providerReference: supplier.ledger.get(o.reference)!.providerReference },
    });
  });

  it('a tampered body → null', async () => {
    const { callback } = await pendingWithCallback();
    const tampered = callback.body.replace('"completed"', '"refused"');
    expect(tampered).not.toBe(callback.body);
    expect(adapter.verifyCallback({ headers: callback.headers, body: tampered })).toBeNull();
  });

  it('checked with the wrong secret → null; signed with the wrong secret → null', async () => {
    const { callback } = await pendingWithCallback();
    expect(adapterFor('not-the-supplier-secret').verifyCallback(callback)).toBeNull();
    callbacks.length = 0;
    const badly = await pendingWithCallback({ badSignature: true });
    expect(adapter.verifyCallback(badly.callback)).toBeNull();
  });

  it('signed more than 300 s away from now → null, though the signature holds', async () => {
    const { callback } = await pendingWithCallback();
    const then = Math.floor(Date.now() / 1000) - 301;
    const signed = (at: number) => new Headers(signHttpBody(SECRET, callback.body, at));
    expect(adapter.verifyCallback({ headers: signed(then), body: callback.body })).toBeNull();
    // One from the future is no better; within the window it holds.
    expect(adapter.verifyCallback({ headers: signed(then + 602), body: callback.body })).toBeNull();
    expect(adapter.verifyCallback({ headers: signed(then + 2), body: callback.body })).not.toBeNull();
  });

  it('a captured callback replayed with a fresh X-Timestamp → null: the signature covers the time', async () => {
    const { callback } = await pendingWithCallback();
    const replayed = new Headers(callback.headers);
    replayed.set('x-timestamp', String(Number(callback.headers.get('x-timestamp')) + 1));
    expect(adapter.verifyCallback({ headers: replayed, body: callback.body })).toBeNull();
    // The signature is of "<X-Timestamp>.<body>", as the README tells a supplier.
    const at = Number(callback.headers.get('x-timestamp'));
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${at}.${callback.body}`).digest('hex')}`;
    expect(callback.headers.get('x-signature')).toBe(expected);
  });

  it('sent twice → the same report twice', async () => {
    const { o } = await pendingWithCallback({ callbackTwice: true }, 2);
    const [first, second] = callbacks.map((callback) => adapter.verifyCallback(callback));
    expect(first).toMatchObject({ reference: o.reference, outcome: { kind: 'completed' } });
    expect(second).toEqual(first);
    expect(supplier.ledger.get(o.reference)!.deliveries).toBe(1);
  });

  it('a late callback still reads', async () => {
    const { o, callback } = await pendingWithCallback({ callbackDelayMs: 100 });
    expect(adapter.verifyCallback(callback)).toMatchObject({ reference: o.reference, outcome: { kind: 'completed' } });
  });

  it('a signed body that is not the protocol → null', () => {
    for (const body of ['not json', JSON.stringify({ status: 'completed' }), JSON.stringify({ reference: 'UTR-1', status: 'done' })]) {
      expect(adapter.verifyCallback({ headers: new Headers(signHttpBody(SECRET, body)), body })).toBeNull();
    }
  });
});

describe('balance', () => {
  it('reads the balance, lowered by the price of each delivery', async () => {
    const before = await adapter.balance!(signal());
    expect(before).toBe(supplier.balance);
    expect(await adapter.send(order(), signal())).toMatchObject({ kind: 'completed' });
    const after = await adapter.balance!(signal());
    expect(Number(before) - Number(after)).toBeCloseTo(2.5, 6);
    expect(after).toMatch(/^\d+\.\d{2}$/);
  });

  it('throws when it cannot be read', async () => {
    await expect(adapterFor('not-the-supplier-secret').balance!(signal())).rejects.toThrow(/HTTP 401/);
  });
});
