import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { digiflazzAdapter, digiflazzCredentials } from '../../src/modules/suppliers/adapters/digiflazz.js';
import type { CallbackRequest, SupplierAdapter, SupplierOrder } from '../../src/modules/suppliers/adapters/types.js';
import { startDigiflazzServer, type DigiflazzServer } from '../helpers/suppliers/digiflazz-server.js';

/** The adapter against a local Digiflazz; no database is needed. */
let digiflazz: DigiflazzServer;
let adapter: SupplierAdapter;
let receiver: Server;
let callbackUrl: string;
const received: CallbackRequest[] = [];

const signal = () => AbortSignal.timeout(5_000);
let counter = 0;
const order = (overrides: Partial<SupplierOrder> = {}): SupplierOrder => ({
  reference: `UTR-${Date.now()}-${++counter}`,
  productCode: 'ml86',
  fields: [
    { name: 'user_id', label: 'User ID', type: 'text', value: '12345678' },
    { name: 'zone_id', label: 'Zone ID', type: 'text', value: '1234' },
  ],
  destination: null,
  quantity: 1,
  ...overrides,
});
const adapterWith = (credentials: Record<string, string>, baseUrl = digiflazz.url) =>
  digiflazzAdapter({ id: 7, baseUrl, credentials: { ...digiflazz.credentials, ...credentials } });
const md5 = (value: string) => createHash('md5').update(value).digest('hex');

async function waitFor(check: () => boolean, timeoutMs = 3_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  digiflazz = await startDigiflazzServer({ username: 'store', apiKey: 'key-0123', webhookSecret: 'hook-secret', deposit: 10_000_000 });
  adapter = digiflazzAdapter({ id: 7, baseUrl: digiflazz.url, credentials: digiflazz.credentials });
  // Where the webhook posts: keeps each callback as the store would receive it (headers and exact body).
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callbacks/providers/7`;
});
afterAll(async () => {
  await digiflazz?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});
afterEach(() => {
  Object.assign(digiflazz.behaviour, { mode: 'deliver', pendingThen: 'deliver', refuseRc: '54', callbackUrl: undefined, callbackTwice: false, callbackDelayMs: 0, badSignature: false, queue: [] });
  received.length = 0;
});

const deliveriesOf = (reference: string) => digiflazz.ledger.deliveryCounts.get(reference) ?? 0;
const requestsFor = (reference: string) => digiflazz.ledger.requests.filter((request) => (request.body as { ref_id?: string }).ref_id === reference);

describe('digiflazz adapter', () => {
  it('names its credentials', () => {
    expect(Object.keys(digiflazzCredentials).sort()).toEqual(['api_key', 'username', 'webhook_secret']);
  });

  it('sends the documented signed body and completes a delivered order with its serial number', async () => {
    const o = order();
    const outcome = await adapter.send(o, signal());
    expect(outcome).toEqual({ kind: 'completed', providerReference: expect.stringMatching(/^SN\d+$/) });
    const [request] = requestsFor(o.reference);
    expect(request).toEqual({
      path: '/v1/transaction',
      body: { username: 'store', buyer_sku_code: 'ml86', customer_no: '123456781234', ref_id: o.reference, sign: md5(`storekey-0123${o.reference}`) },
    });
    expect(digiflazz.ledger.deliveries.get(o.reference)).toMatchObject({ sku: 'ml86', customer_no: '123456781234' });
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it("without a destination, customer_no is the text fields in the form's order, selects left out", async () => {
    // Mobile Legends: a region select first in the form, then the ids.
    const o = order({
      fields: [
        { name: 'region', label: 'Region', type: 'select', value: 'sea' },
        { name: 'user_id', label: 'User ID', type: 'text', value: '12345678' },
        { name: 'zone_id', label: 'Zone ID', type: 'text', value: '1234' },
      ],
    });
    expect((await adapter.send(o, signal())).kind).toBe('completed');
    expect(digiflazz.ledger.deliveries.get(o.reference)?.customer_no).toBe('123456781234');
  });

  it("uses the route's destination as customer_no when it has one", async () => {
    const o = order({ destination: '1234-12345678' });
    expect((await adapter.send(o, signal())).kind).toBe('completed');
    expect(digiflazz.ledger.deliveries.get(o.reference)?.customer_no).toBe('1234-12345678');
  });

  it('a wrong api key: the server refuses the sign (rc 41); a send is refused, a status query is unknown', async () => {
    const wrong = adapterWith({ api_key: 'not-the-key' });
    const o = order();
    expect(await wrong.send(o, signal())).toEqual({ kind: 'refused', reason: '41 Signature Anda salah' });
    expect(deliveriesOf(o.reference)).toBe(0);

    // A pending order whose status is asked with a rotated key: the refusal is about the request, not the order.
    digiflazz.behaviour.mode = 'pending';
    const pending = order();
    expect(await adapter.send(pending, signal())).toEqual({ kind: 'pending' });
    expect(await wrong.status(pending, signal())).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('41') });
  });

  it('pending: pending, then a status query completes it; send + status + status deliver once', async () => {
    digiflazz.behaviour.mode = 'pending';
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'pending' });
    expect(await adapter.status(o, signal())).toEqual({ kind: 'pending' });
    await waitFor(() => deliveriesOf(o.reference) === 1);
    expect(await adapter.status(o, signal())).toEqual({ kind: 'completed', providerReference: expect.stringMatching(/^SN/) });
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'completed' });
    expect(requestsFor(o.reference)).toHaveLength(4);
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it('refuse: refused with "<rc> <message>", and a status query says the same', async () => {
    digiflazz.behaviour.mode = 'refuse';
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'refused', reason: '54 Nomor Tujuan Salah' });
    digiflazz.behaviour.mode = 'deliver';
    expect(await adapter.status(o, signal())).toEqual({ kind: 'refused', reason: '54 Nomor Tujuan Salah' });
    expect(deliveriesOf(o.reference)).toBe(0);
  });

  it('refuse with a balance too low (rc 44): refused, nothing delivered', async () => {
    Object.assign(digiflazz.behaviour, { mode: 'refuse', refuseRc: '44' });
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'refused', reason: '44 Saldo tidak cukup' });
    expect(deliveriesOf(o.reference)).toBe(0);
  });

  it('a ref_id Digiflazz already holds for another order (rc 49) is unknown, never refused', async () => {
    const o = order();
    expect((await adapter.send(o, signal())).kind).toBe('completed');
    const clash = { ...o, productCode: 'ff70' };
    expect(await adapter.send(clash, signal())).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('49') });
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it('error500: unknown, nothing delivered; a later status query creates and completes it (same ref_id, once)', async () => {
    digiflazz.behaviour.mode = 'error500';
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'unknown', reason: 'HTTP 500' });
    expect(deliveriesOf(o.reference)).toBe(0);
    digiflazz.behaviour.mode = 'deliver';
    expect((await adapter.status(o, signal())).kind).toBe('completed');
    expect(await adapter.status(o, signal())).toMatchObject({ kind: 'completed' });
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it('dropAfterDelivering: unknown; the status query finds it completed; delivered once', async () => {
    digiflazz.behaviour.queue.push({ mode: 'dropAfterDelivering' });
    const o = order();
    expect((await adapter.send(o, signal())).kind).toBe('unknown');
    expect(deliveriesOf(o.reference)).toBe(1);
    expect((await adapter.status(o, signal())).kind).toBe('completed');
    expect((await adapter.status(o, signal())).kind).toBe('completed');
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it('slow: a send timed out by its AbortSignal is unknown; the status query finds it completed', async () => {
    digiflazz.behaviour.queue.push({ mode: 'slow', slowMs: 400 });
    const o = order();
    expect((await adapter.send(o, AbortSignal.timeout(50))).kind).toBe('unknown');
    expect(deliveriesOf(o.reference)).toBe(1);
    expect((await adapter.status(o, signal())).kind).toBe('completed');
    expect(deliveriesOf(o.reference)).toBe(1);
  });

  it('a connection refused is unknown', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    expect((await adapterWith({}, url).send(order(), signal())).kind).toBe('unknown');
  });

  it('a redirect is not followed: unknown, and nothing reaches where it points', async () => {
    // A moved host answering 307 to the real one: following it would send the order without the store knowing where.
    const moved = createServer((_req, res) => res.writeHead(307, { Location: `${digiflazz.url}/v1/transaction` }).end());
    await new Promise<void>((resolve) => moved.listen(0, '127.0.0.1', resolve));
    try {
      const o = order();
      const outcome = await adapterWith({}, `http://127.0.0.1:${(moved.address() as AddressInfo).port}`).send(o, signal());
      expect(outcome).toEqual({ kind: 'unknown', reason: 'HTTP 307' });
      expect(requestsFor(o.reference)).toHaveLength(0);
    } finally {
      await new Promise((resolve) => moved.close(resolve));
    }
  });

  it('quantity 2: refused locally, nothing sent, not even by a status query', async () => {
    const o = order({ quantity: 2 });
    const refused = { kind: 'refused', reason: 'quantity above 1 is not supported by digiflazz' };
    expect(await adapter.send(o, signal())).toEqual(refused);
    expect(await adapter.status(o, signal())).toEqual(refused);
    expect(requestsFor(o.reference)).toHaveLength(0);
  });

  it('balance: the deposit as a decimal string, less what was delivered; a wrong key throws', async () => {
    const before = await adapter.balance!(signal());
    expect(before).toBe(String(digiflazz.deposit()));
    await adapter.send(order(), signal());
    expect(Number(await adapter.balance!(signal()))).toBe(Number(before) - digiflazz.behaviour.price);
    await expect(adapterWith({ api_key: 'nope' }).balance!(signal())).rejects.toThrow(/41/);
  });
});

describe('digiflazz callbacks', () => {
  it('a signed callback reports the outcome; a tampered body or a missing signature is null', async () => {
    Object.assign(digiflazz.behaviour, { mode: 'pending', completeAfterMs: 20, callbackUrl });
    const o = order();
    expect(await adapter.send(o, signal())).toEqual({ kind: 'pending' });
    await waitFor(() => received.length === 1);
    const [callback] = received;
    expect(callback!.headers.get('x-digiflazz-event')).toBe('update');
    expect(adapter.verifyCallback(callback!)).toEqual({
      reference: o.reference,
      outcome: { kind: 'completed', providerReference: digiflazz.ledger.transactions.get(o.reference)!.sn },
    });
    const tampered = callback!.body.replace('"Sukses"', '"Gagal"');
    expect(tampered).not.toBe(callback!.body);
    expect(adapter.verifyCallback({ headers: callback!.headers, body: tampered })).toBeNull();
    expect(adapter.verifyCallback({ headers: new Headers(), body: callback!.body })).toBeNull();
    expect(adapterWith({ webhook_secret: 'another' }).verifyCallback(callback!)).toBeNull();
  });

  it('a callback signed with another key is null', async () => {
    Object.assign(digiflazz.behaviour, { mode: 'pending', completeAfterMs: 10, callbackUrl, badSignature: true });
    await adapter.send(order(), signal());
    await waitFor(() => received.length === 1);
    expect(adapter.verifyCallback(received[0]!)).toBeNull();
  });

  it('the same callback twice gives the same report', async () => {
    Object.assign(digiflazz.behaviour, { mode: 'pending', completeAfterMs: 10, callbackUrl, callbackTwice: true, callbackDelayMs: 20 });
    const o = order();
    await adapter.send(o, signal());
    await waitFor(() => received.length === 2);
    const reports = received.map((callback) => adapter.verifyCallback(callback));
    expect(reports[0]).toMatchObject({ reference: o.reference, outcome: { kind: 'completed' } });
    expect(reports[1]).toEqual(reports[0]);
    expect(deliveriesOf(o.reference)).toBe(1);
    expect(digiflazz.sentCallbacks.filter((sent) => sent.body.includes(o.reference))).toHaveLength(2);
  });

  it('a pending order that then fails: the callback reports it refused', async () => {
    Object.assign(digiflazz.behaviour, { mode: 'pending', completeAfterMs: 10, callbackUrl, pendingThen: 'refuse', refuseRc: '53' });
    const o = order();
    await adapter.send(o, signal());
    await waitFor(() => received.length === 1);
    expect(adapter.verifyCallback(received[0]!)).toEqual({ reference: o.reference, outcome: { kind: 'refused', reason: '53 Produk Seller Sedang Tidak Tersedia' } });
    expect(deliveriesOf(o.reference)).toBe(0);
  });
});

describe('digiflazz ledger', () => {
  it('never counts a ref_id twice', () => {
    expect([...digiflazz.ledger.deliveryCounts.values()].every((count) => count === 1)).toBe(true);
  });
});
