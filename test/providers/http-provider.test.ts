import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fulfilTopUpOrder, httpProvider, manualProvider, ProviderUnavailableError, topUpProvider } from '../../src/modules/fulfilment/top-ups.js';
import { createTestAccount } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createTopUpOrder } from '../helpers/fixtures.js';

const SECRET = 'provider-secret-0123456789';

type Delivery = { headers: IncomingHttpHeaders; body: string; signatureValid: boolean };

/**
 * A provider on 127.0.0.1 that checks the signature and answers each order with its next scripted
 * status (200 when none is left). Deliveries are kept per utr, so background retries of other
 * orders cannot disturb a test.
 */
let provider: Server;
const deliveries = new Map<string, Delivery[]>();
const answers = new Map<string, number[]>();
let app: TestApp;
const deliveriesOf = (utr: string) => deliveries.get(utr) ?? [];

beforeAll(async () => {
  provider = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
      const given = Buffer.from(String(req.headers['x-signature'] ?? ''));
      const signatureValid = given.length === expected.length && timingSafeEqual(given, expected);
      const utr = String((JSON.parse(body) as { utr?: string }).utr);
      deliveries.set(utr, [...deliveriesOf(utr), { headers: req.headers, body, signatureValid }]);
      res.writeHead(signatureValid ? (answers.get(utr)?.shift() ?? 200) : 401, { 'Content-Type': 'text/plain' });
      res.end(signatureValid ? 'ok' : 'bad signature');
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/top-ups`;
  app = await startTestApp({ env: { TOPUP_PROVIDER: 'http', TOPUP_PROVIDER_URL: url, TOPUP_PROVIDER_SECRET: SECRET }, workers: true });
});
afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => provider.close(resolve));
});

async function topUpOrder(price = '6.00') {
  const account = await createTestAccount(app, '0.00');
  return createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: price, informations: { 'Player id': '777' } });
}

const orderRow = async (id: number) =>
  (await app.services.sql`select o.status, o.refunded_amount, a.balance from orders o join accounts a on a.id = o.account_id where o.id = ${id}`)[0]!;

describe('http top-up provider', () => {
  it('sends the signed order (ids and labels only) and completes it on 2xx', async () => {
    const order = await topUpOrder();
    answers.set(order.utr, [201]);
    await fulfilTopUpOrder({ ...app.services, provider: topUpProvider(app.services.config) }, order.id);

    expect(deliveriesOf(order.utr)).toHaveLength(1);
    const [delivery] = deliveriesOf(order.utr);
    expect(delivery!.signatureValid).toBe(true);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(delivery!.headers['x-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(JSON.parse(delivery!.body)).toEqual({
      utr: order.utr,
      top_up: { id: order.topUpId, name: 'Game' },
      service: { id: order.serviceId, name: 'Game 6.00', quantity: 1 },
      informations: { 'Player id': '777' },
      amount: '6.00',
      currency: 'USD',
    });
    expect(await orderRow(order.id)).toMatchObject({ status: 1, refunded_amount: '0.00' });

    // Idempotent: a completed order is not sent again.
    await fulfilTopUpOrder({ ...app.services, provider: topUpProvider(app.services.config) }, order.id);
    expect(deliveriesOf(order.utr)).toHaveLength(1);
  });

  it('refunds the order when the provider refuses it (4xx)', async () => {
    const order = await topUpOrder('6.00');
    answers.set(order.utr, [422]);
    await fulfilTopUpOrder({ ...app.services, provider: topUpProvider(app.services.config) }, order.id);
    expect(await orderRow(order.id)).toEqual({ status: 2, refunded_amount: '6.00', balance: '6.00' });
    const [row] = await app.services.sql`select note from orders where id = ${order.id}`;
    expect(row!.note).toContain('422');
  });

  it('throws for retry and leaves the order waiting on 5xx, 408, 429 and network errors', async () => {
    const order = await topUpOrder();
    for (const status of [500, 503, 408, 429]) {
      answers.set(order.utr, [status]);
      await expect(fulfilTopUpOrder({ ...app.services, provider: topUpProvider(app.services.config) }, order.id)).rejects.toBeInstanceOf(ProviderUnavailableError);
      expect(await orderRow(order.id)).toMatchObject({ status: 0, refunded_amount: '0.00' });
    }
    const unreachable = httpProvider('http://127.0.0.1:1/', SECRET, 2000);
    await expect(fulfilTopUpOrder({ ...app.services, provider: unreachable }, order.id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect((await orderRow(order.id)).status).toBe(0);
  });

  it('leaves the order for an operator with the manual provider', async () => {
    const order = await topUpOrder();
    await fulfilTopUpOrder({ ...app.services, provider: manualProvider }, order.id);
    expect(deliveriesOf(order.utr)).toHaveLength(0);
    expect((await orderRow(order.id)).status).toBe(0);
  });
});

describe('through the fulfilment queue', () => {
  it('retries with backoff until the provider accepts', async () => {
    const order = await topUpOrder();
    answers.set(order.utr, [503, 500]);
    await app.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr, backoff: { type: 'fixed', delay: 100 } });
    await expect.poll(async () => (await orderRow(order.id)).status, { timeout: 10_000 }).toBe(1);
    expect(deliveriesOf(order.utr)).toHaveLength(3);
  });

  it('leaves the order in initiate once the last attempt failed', async () => {
    const order = await topUpOrder();
    answers.set(order.utr, [500, 500]);
    const connection = new Redis(app.services.config.REDIS_URL, { maxRetriesPerRequest: null });
    const events = new QueueEvents(app.services.queues.fulfilment.name, { connection, prefix: app.services.config.BULLMQ_PREFIX });
    try {
      await events.waitUntilReady();
      const job = await app.services.queues.fulfilment.add(
        'fulfil',
        { orderId: order.id, utr: order.utr },
        { jobId: order.utr, attempts: 2, backoff: { type: 'fixed', delay: 100 } },
      );
      await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/503|500/);
    } finally {
      await events.close();
      connection.disconnect();
    }
    expect(deliveriesOf(order.utr)).toHaveLength(2);
    expect(await orderRow(order.id)).toMatchObject({ status: 0, refunded_amount: '0.00' });
  });
});
