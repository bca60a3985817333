/**
 * The order lists through the cached-read lane (src/http/cached-lane.ts): once the app has answered a path and query
 * of an order list, the lane answers it again before the app, for any signed-in caller, with that caller's own page
 * read as the app reads it (listOrders, its cache under the account's stamps). These tests serve the app behind a fetch
 * that counts the requests reaching it, so each one knows which path answered.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cardCodes } from '../../src/db/schema.js';
import { sealCode } from '../../src/modules/inventory/codes.js';
import { adminOf, createTestAccount, expectJson, tokenFor, type Json } from '../helpers/api.js';
import { createCard, createTopUpOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { comparable, serveCountingApp, type RawAnswer } from '../helpers/lane.js';

let app: TestApp;
let served: Awaited<ReturnType<typeof serveCountingApp>>;
let serviceId: number;
beforeAll(async () => {
  app = await startTestApp({ workers: true });
  served = await serveCountingApp(app);
  const card = await createCard(app.services.db, { name: 'Lane Orders Card', services: [{ price: '2.00' }] });
  serviceId = card.services[0]!.id;
  const key = app.services.config.codeEncryptionKey;
  for (let i = 0; i < 20; i += 1) await app.services.db.insert(cardCodes).values({ cardServiceId: serviceId, ...sealCode(key, `LANE-CODE-${i}`) });
});
afterAll(async () => {
  await served?.close();
  await app?.close();
});

/** A new account signed in: its id and the headers of its token. */
async function signedIn() {
  const account = await createTestAccount(app);
  return { id: account.id, auth: { Authorization: `Bearer ${await tokenFor(app, account)}` } };
}

const body = (answer: RawAnswer): Json => JSON.parse(answer.body) as Json;

/** Places a card order through the served app and waits until its code is given (status 1). */
async function completedOrder(auth: Record<string, string>): Promise<string> {
  const placed = await served.send('/api/card/make-order', { ...auth, 'Content-Type': 'application/json' }, 'POST', JSON.stringify({ service_ids: [serviceId], quantities: [1] }));
  expect(placed.status).toBe(200);
  const utr = body(placed).message.utr as string;
  // order/details is never answered by the lane: the order as the database has it.
  await vi.waitFor(async () => expect(body(await served.get(`/api/order/details?utr=${utr}`, auth)).message.status).toBe(1), { timeout: 20_000, interval: 100 });
  return utr;
}

/** The app's own answer: If-None-Match always leaves a request to the app (an order list has no ETag, so it is ignored there). */
const fromApp = async (path: string, auth: Record<string, string>) => {
  const answer = await served.get(path, { ...auth, 'If-None-Match': '"none"' });
  expect(answer.viaApp).toBe(true);
  return answer;
};

let owner: Awaited<ReturnType<typeof signedIn>>;
const utrs: string[] = [];
beforeAll(async () => {
  owner = await signedIn();
  for (let i = 0; i < 3; i += 1) utrs.push(await completedOrder(owner.auth));
  await createTopUpOrder(app.services.db, { accountId: owner.id, status: 1 });
});

describe('a repeated order list read', () => {
  it.each(['/api/get-card/orders', '/api/card/order?page=2&per_page=1', '/api/get-topup/orders', '/api/topUp/order?per_page=5', 'AFTER'])(
    '%s: the second answer skips the app, with the same status, header lines and bytes',
    async (template) => {
      // A keyset page: the one below the newest order.
      const path = template === 'AFTER' ? `/api/get-card/orders?per_page=1&after=${utrs.at(-1)}` : template;
      const first = await served.get(path, owner.auth);
      expect(first.status).toBe(200);
      expect(first.viaApp).toBe(true);
      const second = await served.get(path, owner.auth);
      expect(second.viaApp).toBe(false);
      expect(second.status).toBe(200);
      expect(comparable(second)).toEqual(comparable(first));
      expect(second.headers.map(([name]) => name)).toEqual(first.headers.map(([name]) => name));
      expect(second.body).toBe(first.body);
      if (template === 'AFTER') expect(body(second).message.data.map((o: Json) => o.utr)).toEqual([utrs.at(-2)]);
    },
  );

  it("reads a keyset page's cursor in the caller's own list: another account's utr finds nothing there, as in the app", async () => {
    const path = `/api/get-card/orders?per_page=1&after=${utrs.at(-1)}`;
    await served.get(path, owner.auth);
    const other = await signedIn();
    await served.get('/api/get-card/orders', other.auth);
    await served.get(path, owner.auth);
    const viaLane = await served.get(path, other.auth);
    expect(viaLane.viaApp).toBe(false);
    expect(body(viaLane).message.data).toEqual([]);
    expect(viaLane.body).toBe((await fromApp(path, other.auth)).body);
  });

  it("answers another caller with that caller's own page, as the app gives it", async () => {
    const path = '/api/get-card/orders?per_page=7';
    expect((await served.get(path, owner.auth)).viaApp).toBe(true);
    const other = await signedIn();
    const otherUtr = await completedOrder(other.auth);
    // Offered again: the fulfilment above may have outlasted the lane's 2 s.
    await served.get(path, owner.auth);
    const viaLane = await served.get(path, other.auth);
    expect(viaLane.viaApp).toBe(false);
    expect(body(viaLane).message.data.map((o: Json) => o.utr)).toEqual([otherUtr]);
    expect(body(viaLane).message.data[0].order_details[0].card_codes).toEqual([expect.stringMatching(/^LANE-CODE-\d+$/)]);
    expect(viaLane.body).toBe((await fromApp(path, other.auth)).body);
    // And the owner still its own.
    expect(body(await served.get(path, owner.auth)).message.data.map((o: Json) => o.utr)).not.toContain(otherUtr);
  });

  it('shows an order placed since at once', async () => {
    const path = '/api/get-card/orders?per_page=3';
    await served.get(path, owner.auth);
    expect((await served.get(path, owner.auth)).viaApp).toBe(false);
    const placed = await served.send('/api/card/make-order', { ...owner.auth, 'Content-Type': 'application/json' }, 'POST', JSON.stringify({ service_ids: [serviceId], quantities: [1] }));
    const utr = body(placed).message.utr as string;
    const after = await served.get(path, owner.auth);
    expect(after.viaApp).toBe(false);
    expect(body(after).message.data[0].utr).toBe(utr);
    expect(body(after).message.total).toBe(body(await fromApp(path, owner.auth)).message.total);
  });

  it("answers a test key's token with the account's test orders only (C25), and the live token with its live ones", async () => {
    const path = '/api/get-card/orders?per_page=9';
    const admin = adminOf(app);
    const testKey = (await expectJson(await admin('POST', `/accounts/${owner.id}/keys`, { mode: 'test' }), 200)).message as Json;
    const testAuth = { Authorization: `Bearer ${await tokenFor(app, { publicKey: testKey.public_key, secretKey: testKey.secret_key })}` };
    const placed = await served.send('/api/card/make-order', { ...testAuth, 'Content-Type': 'application/json' }, 'POST', JSON.stringify({ service_ids: [serviceId], quantities: [1] }));
    expect(placed.status).toBe(200);
    const testUtr = body(placed).message.utr as string;
    await served.get(path, owner.auth);
    const viaLane = await served.get(path, testAuth);
    expect(viaLane.viaApp).toBe(false);
    expect(body(viaLane).message.data.map((o: Json) => [o.utr, o.livemode])).toEqual([[testUtr, false]]);
    expect(viaLane.body).toBe((await fromApp(path, testAuth)).body);
    const live = await served.get(path, owner.auth);
    expect(live.viaApp).toBe(false);
    expect(body(live).message.data.map((o: Json) => o.utr)).not.toContain(testUtr);
    expect(body(live).message.data.every((o: Json) => !('livemode' in o))).toBe(true);
  });

  it('is logged and counted as the full path does it, under the route pattern and the caller', async () => {
    const path = '/api/get-card/orders?page=1';
    await served.get(path, owner.auth);
    const counted = await served.requestCount('/api/get-card/orders');
    const answer = await served.get(path, { ...owner.auth, 'X-Request-Id': 'orders-lane-1' });
    expect(answer.viaApp).toBe(false);
    expect(answer.headers).toContainEqual(['x-request-id', 'orders-lane-1']);
    expect(await served.requestCount('/api/get-card/orders')).toBe(counted + 1);
    await served.get(path, { ...owner.auth, 'X-Request-Id': 'orders-app-1', 'If-None-Match': '"none"' });
    const [laneLine, appLine] = ['orders-lane-1', 'orders-app-1'].map((id) => served.logLines().find((line) => line.requestId === id && line.msg === 'request'));
    expect(laneLine).toMatchObject({ method: 'GET', route: '/api/get-card/orders', status: 200, accountId: owner.id });
    expect({ ...laneLine, requestId: 0, time: 0, durationMs: 0 }).toEqual({ ...appLine, requestId: 0, time: 0, durationMs: 0 });
  });
});

describe('what the lane leaves to the app', () => {
  it('a query the app refused, and one with parameters the route does not take', async () => {
    for (const [path, status] of [
      ['/api/get-card/orders?page=0', 422],
      ['/api/get-card/orders?per_page=abc', 422],
      ['/api/get-card/orders?page=1&utm=x', 200],
      ['/api/get-card/orders?page=1&page=1', 422],
    ] as const) {
      expect((await served.get(path, owner.auth)).status, path).toBe(status);
      const again = await served.get(path, owner.auth);
      expect(again.viaApp, path).toBe(true);
      expect(again.status, path).toBe(status);
    }
  });

  it('a caller without a token, or with one the process has not seen', async () => {
    const path = '/api/get-card/orders?per_page=2';
    await served.get(path, owner.auth);
    const none = await served.get(path);
    expect([none.viaApp, none.status]).toEqual([true, 401]);
    // A token is checked by the app the first time this process sees it; from then on the lane knows it.
    const fresh = await signedIn();
    const first = await served.get(path, fresh.auth);
    expect([first.viaApp, first.status]).toEqual([true, 200]);
    expect((await served.get(path, fresh.auth)).viaApp).toBe(false);
  });
});
