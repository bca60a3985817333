/**
 * The TypeScript client (clients/typescript) against the real service over HTTP, with workers: typed calls, the token
 * exchanged once and renewed (tokens here live 2 s), orders retried under one Idempotency-Key when their answer is
 * lost (one order, one debit), every failure as one StoreError with a kind, and webhooks verified by verifyWebhook.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { createStoreClient, isStoreError, StoreError, utrOfTopUpOrder, verifyWebhook, WebhookVerificationError, type RetryOptions, type StoreErrorKind, type WebhookEvent } from '@topup-store/client';
import { Webhook } from 'standardwebhooks';
import { kindOf } from '../../clients/typescript/src/errors.js';
import { addressNotAllowed, ERRORS, type ErrorCode } from '../../src/core/errors.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, createTestAccount, storeClientFor, successMessage } from '../helpers/api.js';
import { createCardService, createTopUpService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { waitFor } from '../helpers/system.js';
import { stockCodes } from '../workers/support.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workers: true, env: { TOKEN_TTL_SECONDS: '2', WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => app?.close());

/** A fetch that notes each request's path and answer's status, so a test sees what the client sent. */
function recordingFetch(through: typeof fetch = fetch) {
  const calls: Array<{ path: string; status: number; idempotencyKey: string | null }> = [];
  const recording = async (request: Request) => {
    const response = await through(request);
    calls.push({ path: new URL(request.url).pathname, status: response.status, idempotencyKey: request.headers.get('Idempotency-Key') });
    return response;
  };
  return { fetch: recording as typeof fetch, calls };
}

async function storeFor(balance = '100.00', options: { fetch?: typeof fetch; baseUrl?: string; retry?: RetryOptions; renewBeforeMs?: number } = {}) {
  const keys = await createTestAccount(app, balance);
  const store = createStoreClient({
    baseUrl: options.baseUrl ?? app.baseUrl,
    publicKey: keys.publicKey,
    secretKey: keys.secretKey,
    retry: { baseDelayMs: 20, ...options.retry },
    ...(options.renewBeforeMs === undefined ? {} : { renewBeforeMs: options.renewBeforeMs }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return { keys, store };
}

/** A card service priced `price` with `codes` codes in stock. */
async function stockedService(price: string, codes: number) {
  const service = await createCardService(app.services.db, price);
  await stockCodes(app, service.serviceId, codes);
  return service;
}

/** The StoreError a call rejects with. */
async function failureOf(call: Promise<unknown>): Promise<StoreError> {
  const error = await call.then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

const ordersOf = (accountId: number) =>
  app.services.sql<{ utr: string; status: number }[]>`select utr, status from orders where account_id = ${accountId}`;
/** The account's live debits (test orders are paid from the test balance, C25). */
const debitsOf = (accountId: number) =>
  app.services.sql<{ amount: string }[]>`select amount::text from balance_ledger where account_id = ${accountId} and kind = 'order_debit' and livemode`;

describe('typed calls', () => {
  it('reads the catalog, places a card order and reads its codes, the token exchanged once for all of it', async () => {
    const service = await createCardService(app.services.db, '2.50');
    const codes = await stockCodes(app, service.serviceId, 2);
    const recorded = recordingFetch();
    const { store } = await storeFor('100.00', { fetch: recorded.fetch });

    const { data: categories, response } = await store.GET('/api/get-category');
    expect(response.status).toBe(200);
    expect(Array.isArray(categories.message.categories)).toBe(true);
    const { data: placed } = await store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [2] } });
    await waitFor('the order completed', async () => (await store.GET('/api/order/details', { params: { query: { utr: placed.message.utr } } })).data.message.status === 1);
    const { data: details } = await store.GET('/api/order/details', { params: { query: { utr: placed.message.utr } } });
    const lines = details.message.order_details.flatMap((line) => ('card_codes' in line ? line.card_codes : []));
    expect(lines.sort()).toEqual([...codes].sort());

    const exchanges = recorded.calls.filter((call) => call.path === '/api/generate/authorization-token');
    // Tokens live 2 s here: one exchange, or one more if the wait above outlived the first token.
    expect(exchanges.length).toBeGreaterThanOrEqual(1);
    expect(recorded.calls.filter((call) => call.status === 401)).toEqual([]);
    // Each order carried a key of its own.
    expect(recorded.calls.find((call) => call.path === '/api/card/make-order')?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('places a top-up order from a JSON body and reads its utr from the message', async () => {
    const { topUpId, serviceId } = await createTopUpService(app.services.db, '5.00');
    const { store, keys } = await storeFor();
    const { data } = await store.POST('/api/top-up/make-order', { body: { topUpId, serviceId, player_id: '5123456789' } });
    const utr = utrOfTopUpOrder(data.message);
    expect((await ordersOf(keys.id)).map((order) => order.utr)).toEqual([utr]);
  });

  it('calls Interface B with the api key', async () => {
    const keys = await createTestAccount(app);
    const license = createStoreClient({ baseUrl: app.baseUrl, apiKey: keys.apiKey });
    const { data } = await license.GET('/license-api/account/details');
    expect(data.status).toBe('success');
  });
});

describe('the token', () => {
  it('is renewed before it expires: calls 2.5 s apart with 2 s tokens meet no 401', async () => {
    const recorded = recordingFetch();
    const { store } = await storeFor('100.00', { fetch: recorded.fetch });
    // The token taken late in a second: the store's Date header (whole seconds) then lags its clock by 0.9 s, which
    // must not count as 0.9 s more of the token's life.
    await new Promise((resolve) => setTimeout(resolve, (1900 - (Date.now() % 1000)) % 1000));
    await store.GET('/api/get-category');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await store.GET('/api/get-category');
    expect(recorded.calls.map((call) => call.path)).toEqual([
      '/api/generate/authorization-token',
      '/api/get-category',
      '/api/generate/authorization-token',
      '/api/get-category',
    ]);
    expect(recorded.calls.every((call) => call.status === 200)).toBe(true);
  });

  it('is renewed once the store refuses it, and the call is sent again', async () => {
    const recorded = recordingFetch();
    // No renewal ahead of time: the token is used until the store says it has expired.
    const { store } = await storeFor('100.00', { fetch: recorded.fetch, renewBeforeMs: -60_000 });
    await store.GET('/api/get-category');
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const { data } = await store.GET('/api/get-category');
    expect(data.status).toBe('success');
    expect(recorded.calls.map((call) => `${call.path} ${call.status}`)).toEqual([
      '/api/generate/authorization-token 200',
      '/api/get-category 200',
      '/api/get-category 401',
      '/api/generate/authorization-token 200',
      '/api/get-category 200',
    ]);
  });

  it('is exchanged once for calls made at the same time', async () => {
    const recorded = recordingFetch();
    const { store } = await storeFor('100.00', { fetch: recorded.fetch });
    await Promise.all(Array.from({ length: 8 }, () => store.GET('/api/get-category')));
    expect(recorded.calls.filter((call) => call.path === '/api/generate/authorization-token')).toHaveLength(1);
  });
});

/**
 * A TCP relay to the service that cuts the connection of the first request naming `path` as soon as its answer
 * starts to come back: the store has done the work, the client never hears of it.
 */
async function answerLosingRelay(path: string) {
  let cut = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ port: Number(new URL(app.baseUrl).port), host: '127.0.0.1' });
    let losing = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => (client.destroy(), upstream.destroy(), sockets.delete(socket)));
    }
    client.on('data', (chunk: Buffer) => {
      if (cut === 0 && chunk.includes(path)) losing = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!losing) return void client.write(chunk);
      cut += 1;
      losing = false;
      client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: () => cut,
    close: () => new Promise<void>((resolve) => (sockets.forEach((socket) => socket.destroy()), server.close(() => resolve()))),
  };
}

describe('orders sent again', () => {
  it('an order whose answer was lost is retried under its key: one order, one debit, and its utr returned', async () => {
    const relay = await answerLosingRelay('/api/card/make-order');
    try {
      const service = await stockedService('4.00', 1);
      const recorded = recordingFetch();
      const { store, keys } = await storeFor('10.00', { baseUrl: relay.baseUrl, fetch: recorded.fetch });
      const { data } = await store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } });
      expect(relay.cuts()).toBe(1);
      // The first send never got an answer (so the recording fetch never saw one); the second got the first's order.
      expect(recorded.calls.filter((call) => call.path === '/api/card/make-order')).toHaveLength(1);
      expect((await ordersOf(keys.id)).map((order) => order.utr)).toEqual([data.message.utr]);
      expect(await debitsOf(keys.id)).toEqual([{ amount: '-4.00' }]);
      const [account] = await app.services.sql<{ balance: string }[]>`select balance::text from accounts where id = ${keys.id}`;
      expect(account!.balance).toBe('6.00');
    } finally {
      await relay.close();
    }
  });

  it('an order answered 503 after it committed (a proxy failing on the way back) is sent again: the first order comes back', async () => {
    const service = await stockedService('2.00', 1);
    const keysSent: Array<string | null> = [];
    const failingOnce = (async (request: Request) => {
      const response = await fetch(request);
      if (new URL(request.url).pathname !== '/api/card/make-order') return response;
      keysSent.push(request.headers.get('Idempotency-Key'));
      if (keysSent.length > 1) return response;
      await response.body?.cancel();
      return Response.json({ status: 'failed', errors: 'The service is temporarily unavailable.' }, { status: 503 });
    }) as typeof fetch;
    const { store, keys } = await storeFor('10.00', { fetch: failingOnce });
    const { data } = await store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } });
    expect(keysSent).toHaveLength(2);
    expect(keysSent[1]).toBe(keysSent[0]);
    expect((await ordersOf(keys.id)).map((order) => order.utr)).toEqual([data.message.utr]);
    expect(await debitsOf(keys.id)).toEqual([{ amount: '-2.00' }]);
  });

  it('a write other than an order is not sent again: the lost answer is a network error', async () => {
    const relay = await answerLosingRelay('/api/webhooks');
    try {
      const { store, keys } = await storeFor('10.00', { baseUrl: relay.baseUrl });
      // Not even with a key: only the two order endpoints honour one.
      const error = await failureOf(store.POST('/api/webhooks', { body: { url: 'http://127.0.0.1:9/hooks' }, headers: { 'Idempotency-Key': 'hooks-1' } }));
      expect(error.kind).toBe('network');
      expect(error.status).toBe(0);
      const endpoints = await app.services.sql`select id from webhook_endpoints where account_id = ${keys.id}`;
      expect(endpoints).toHaveLength(1);
    } finally {
      await relay.close();
    }
  });

  it('a key sent with another body is an idempotency_conflict, and nothing more is written', async () => {
    const service = await stockedService('1.00', 3);
    const { store, keys } = await storeFor();
    const header = { 'Idempotency-Key': `order-${keys.id}` };
    await store.POST('/api/card/make-order', { params: { header }, body: { service_ids: [service.serviceId], quantities: [1] } });
    const error = await failureOf(store.POST('/api/card/make-order', { params: { header }, body: { service_ids: [service.serviceId], quantities: [2] } }));
    expect(error.kind).toBe('idempotency_conflict');
    expect(await ordersOf(keys.id)).toHaveLength(1);
  });
});

/** A fetch that answers the first `times` calls to `path` itself with `answer()` (the store never sees them). */
function answeringFirst(path: string, times: number, answer: () => Response) {
  let answered = 0;
  return (async (request: Request) => {
    if (new URL(request.url).pathname === path && answered < times) {
      answered += 1;
      return answer();
    }
    return fetch(request);
  }) as typeof fetch;
}

describe('retries and their limits', () => {
  it('a lost order given up on carries its key: sent again with it, the store answers the first order, placed once', async () => {
    const relay = await answerLosingRelay('/api/card/make-order');
    try {
      const service = await stockedService('3.00', 1);
      const { store: noRetries, keys } = await storeFor('10.00', { baseUrl: relay.baseUrl, retry: { retries: 0 } });
      const body = { service_ids: [service.serviceId], quantities: [1] };
      const lost = await failureOf(noRetries.POST('/api/card/make-order', { body }));
      expect(lost.kind).toBe('network');
      expect(lost.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      const { data } = await noRetries.POST('/api/card/make-order', { params: { header: { 'Idempotency-Key': lost.idempotencyKey! } }, body });
      expect((await ordersOf(keys.id)).map((order) => order.utr)).toEqual([data.message.utr]);
      expect(await debitsOf(keys.id)).toEqual([{ amount: '-3.00' }]);
    } finally {
      await relay.close();
    }
  });

  it('reads are retried after a 502, and a 429 after the Retry-After it names', async () => {
    const badGateway = answeringFirst('/api/get-category', 2, () => new Response('<html>bad gateway</html>', { status: 502 }));
    const { store } = await storeFor('1.00', { fetch: badGateway });
    expect((await store.GET('/api/get-category')).data.status).toBe('success');

    const limited = answeringFirst('/api/get-campaign', 1, () => Response.json({ status: 'failed', errors: 'Too many attempts.' }, { status: 429, headers: { 'Retry-After': '1' } }));
    const { store: patient } = await storeFor('1.00', { fetch: limited });
    const started = Date.now();
    await patient.GET('/api/get-campaign');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('a Retry-After longer than the client waits, an order still in progress past every retry, and an abort end the call', async () => {
    const longWait = answeringFirst('/api/get-category', 1, () => Response.json({ status: 'failed', errors: 'Too many attempts.' }, { status: 429, headers: { 'Retry-After': '120' } }));
    const { store } = await storeFor('1.00', { fetch: longWait });
    expect(await failureOf(store.GET('/api/get-category'))).toMatchObject({ kind: 'rate_limited', status: 429 });

    const inProgress = () => Response.json({ status: 'failed', errors: 'A request with this Idempotency-Key is still being processed.' }, { status: 409 });
    const { store: busy, keys } = await storeFor('10.00', { fetch: answeringFirst('/api/card/make-order', 100, inProgress) });
    const service = await createCardService(app.services.db, '1.00');
    const stillRunning = await failureOf(busy.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } }));
    expect(stillRunning).toMatchObject({ kind: 'idempotency_in_progress', status: 409 });
    expect(stillRunning.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ordersOf(keys.id)).toEqual([]);

    const unavailable = answeringFirst('/api/get-category', 100, () => Response.json({ status: 'failed', errors: 'Down.' }, { status: 503 }));
    // Back-off waits of a second or more: the abort comes during the first.
    const { store: waiting } = await storeFor('1.00', { fetch: unavailable, retry: { baseDelayMs: 2_000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('the shopper left')), 100);
    await expect(waiting.GET('/api/get-category', { signal: controller.signal })).rejects.toThrow('the shopper left');
  });
});

describe('failures as one typed error', () => {
  it('names a validation failure, an unknown order and a short balance, with the store messages and request id', async () => {
    const service = await createCardService(app.services.db, '50.00');
    const { store, keys } = await storeFor('1.00');
    const invalid = await failureOf(store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [] } }));
    expect(invalid).toMatchObject({ kind: 'validation', status: 422, method: 'POST', path: '/api/card/make-order' });
    expect(invalid.messages.length).toBeGreaterThanOrEqual(1);
    const unknown = await failureOf(store.GET('/api/order/details', { params: { query: { utr: 'C0NOSUCHORDER' } } }));
    expect(unknown).toMatchObject({ kind: 'not_found', status: 404, messages: ['No order with the utr "C0NOSUCHORDER".'] });
    expect(unknown.requestId).toMatch(/\S{8,}/);
    const short = await failureOf(store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } }));
    expect(short).toMatchObject({ kind: 'insufficient_balance', status: 409, messages: ['Insufficient balance'] });
    expect(isStoreError(short, 'insufficient_balance')).toBe(true);
    expect(await ordersOf(keys.id)).toEqual([]);
  });

  it("names Interface B's envelope and a refused key pair", async () => {
    const license = createStoreClient({ baseUrl: app.baseUrl, apiKey: 'ak_not_a_key' });
    const refused = await failureOf(license.GET('/license-api/account/details'));
    expect(refused.kind).toBe('unauthenticated');
    expect(refused.status).toBe(401);
    expect(refused.messages).toHaveLength(1);
    const wrongPair = createStoreClient({ baseUrl: app.baseUrl, publicKey: 'pk_nobody', secretKey: 'sk_nothing' });
    const exchange = await failureOf(wrongPair.GET('/api/get-category'));
    expect(exchange).toMatchObject({ kind: 'unauthenticated', status: 401, path: '/api/generate/authorization-token', messages: ['Invalid public key or secret key.'] });
  });
});

describe('the kinds', () => {
  it("name every failure of the store's error catalogue, as the store words it", () => {
    // The catalogue's own wording, but where the store says more than it: the price guard names both figures.
    const worded: Partial<Record<ErrorCode, string>> = { above_max_price: 'The order costs 12.50 USD, above max_price 12.00.' };
    const kinds = Object.fromEntries(
      Object.entries(ERRORS).map(([code, { status, message }]) => [code, kindOf(status, [worded[code as ErrorCode] ?? message], false)]),
    );
    expect(kinds).toEqual({
      ...Object.fromEntries(Object.entries(ERRORS).filter(([, { status }]) => status === 409).map(([code]) => [code, 'conflict'])),
      bad_request: 'bad_request', payload_too_large: 'bad_request', headers_too_large: 'bad_request', request_timeout: 'bad_request',
      unsupported_media_type: 'bad_request', unsupported_media_type_json: 'bad_request', unsupported_media_type_codes: 'bad_request',
      method_not_allowed: 'bad_request',
      unauthenticated: 'unauthenticated', invalid_credentials: 'unauthenticated', forbidden: 'unauthenticated',
      metrics_forbidden: 'unauthenticated', bad_signature: 'unauthenticated',
      read_only_key: 'read_only_key', address_not_allowed: 'address_not_allowed',
      not_found: 'not_found', route_not_found: 'not_found', validation: 'validation',
      insufficient_balance: 'insufficient_balance', above_max_price: 'above_max_price',
      idempotency_conflict: 'idempotency_conflict', idempotency_in_progress: 'idempotency_in_progress',
      rate_limited: 'rate_limited', client_closed: 'server', internal: 'server', unavailable: 'unavailable', admin_disabled: 'unavailable',
    });
    expect(kindOf(403, [addressNotAllowed('192.0.2.1').message], false)).toBe('address_not_allowed');
    expect(kindOf(409, [ERRORS.insufficient_balance.message], true)).toBe('insufficient_test_balance');
  });
});

describe('key scopes, allow-lists and test mode (C25, C26)', () => {
  const admin = () => adminOf(app);
  const kindOf = async (call: Promise<unknown>): Promise<StoreErrorKind> => (await failureOf(call)).kind;

  it('a read-only key reads and gets read_only_key on a write', async () => {
    const account = await createTestAccount(app);
    const issued = await successMessage(admin()('POST', `/accounts/${account.id}/keys`, { mode: 'live', scope: 'read' }));
    const store = storeClientFor(app, { publicKey: issued.public_key, secretKey: issued.secret_key });
    await store.GET('/api/get-category');
    expect(await kindOf(store.POST('/api/card/make-order', { body: { service_ids: [1], quantities: [1] } }))).toBe('read_only_key');
  });

  it('an address outside the allow-list gets address_not_allowed at the token exchange', async () => {
    const { store, keys } = await storeFor();
    await successMessage(admin()('PATCH', `/accounts/${keys.id}`, { allowed_ips: ['203.0.113.7'] }));
    const error = await failureOf(store.GET('/api/get-category'));
    expect(error).toMatchObject({ kind: 'address_not_allowed', status: 403, messages: ['Requests from 127.0.0.1 are not allowed for this account.'] });
  });

  it('a test key says it is one, and its short test balance is insufficient_test_balance', async () => {
    const account = await createTestAccount(app);
    const issued = await successMessage(admin()('POST', `/accounts/${account.id}/keys`, { mode: 'test' }));
    const store = storeClientFor(app, { publicKey: issued.public_key, secretKey: issued.secret_key });
    expect(store.testMode).toBe(true);
    const service = await createCardService(app.services.db, '800.00');
    // 1,000.00 of test balance at the first test token: the second order of 800.00 is short.
    await store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } });
    expect(await kindOf(store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } }))).toBe('insufficient_test_balance');
    // Paid from the test balance, never the live one.
    expect(await debitsOf(account.id)).toEqual([]);
  });
});

/** A receiver that verifies each event with the client's verifyWebhook (and keeps what it refused). */
async function verifyingReceiver() {
  let secret = '';
  const events: WebhookEvent[] = [];
  const requests: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ headers: req.headers, body });
      try {
        events.push(await verifyWebhook(secret, req.headers, body));
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    trust: (value: string) => (secret = value),
    events,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('webhooks', () => {
  it("verifies the store's events with verifyWebhook, typed, and refuses a changed body, another secret or a stale one", async () => {
    const receiver = await verifyingReceiver();
    try {
      const service = await stockedService('3.00', 1);
      const { store } = await storeFor();
      const { data: endpoint } = await store.POST('/api/webhooks', { body: { url: receiver.url } });
      receiver.trust(endpoint.message.secret);
      const { data: placed } = await store.POST('/api/card/make-order', { body: { service_ids: [service.serviceId], quantities: [1] } });
      await store.POST('/api/webhooks/{id}/test', { params: { path: { id: endpoint.message.id } } });
      await waitFor('two events', async () => receiver.events.length >= 2);
      const completed = receiver.events.find((event) => event.type === 'order.completed');
      expect(completed && 'utr' in completed.data ? completed.data : undefined).toMatchObject({ utr: placed.message.utr, status: 1, status_label: 'completed', price: 3 });
      expect(receiver.events.map((event) => event.type)).toContain('webhook.test');

      // The order.completed delivery, whichever came first: changing its status must change what was signed.
      const { headers, body } = receiver.requests.find((request) => request.body.includes('"order.completed"'))!;
      const changedBody = body.replace('"status":1', '"status":2');
      expect(changedBody).not.toBe(body);
      const refusal = (secret: string, received: string, at?: Date) =>
        verifyWebhook(secret, headers, received, at ? { now: at } : {}).then(
          () => 'accepted',
          (error: unknown) => (error instanceof WebhookVerificationError ? error.message : String(error)),
        );
      expect(await refusal(endpoint.message.secret, body)).toBe('accepted');
      expect(await refusal(endpoint.message.secret, changedBody)).toBe('No signature matches.');
      expect(await refusal(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, body)).toBe('No signature matches.');
      expect(await refusal(endpoint.message.secret, body, new Date(Date.now() + 10 * 60_000))).toBe('The webhook-timestamp is missing or too far from now.');
    } finally {
      await receiver.close();
    }
  });

  it('accepts what the standardwebhooks package signs, from Fetch Headers too', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const body = JSON.stringify({ type: 'webhook.test', timestamp: '2026-11-28T10:00:00.000000Z', data: { endpoint_id: 7 } });
    const at = new Date();
    const signature = new Webhook(secret).sign('msg_1', at, body);
    const headers = new Headers({ 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': `v1,bm90LWl0 ${signature}` });
    expect(await verifyWebhook(secret, headers, new TextEncoder().encode(body))).toEqual(JSON.parse(body));
  });
});
