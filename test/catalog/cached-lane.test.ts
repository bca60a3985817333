import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { serveHttp } from '../../src/http/server.js';
import { createTestAccount, tokenFor } from '../helpers/api.js';
import { createCard, createOrderFor, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { comparable, serveCountingApp } from '../helpers/lane.js';

/**
 * The cached-read lane (src/http/cached-lane.ts) answers a repeated catalog read before the app: these tests serve
 * the app behind a fetch that counts the requests reaching it, so each one knows which path answered.
 */
let app: TestApp;
let served: Awaited<ReturnType<typeof serveCountingApp>>;
beforeAll(async () => {
  app = await startTestApp();
  served = await serveCountingApp(app);
});
afterAll(async () => {
  await served?.close();
  await app?.close();
});
const get: typeof served.get = (...args) => served.get(...args);
const logLines = () => served.logLines();
const requestCount = (route: string) => served.requestCount(route);

let token: string;
let accountId: number;
let cardId: number;
beforeAll(async () => {
  const account = await createTestAccount(app);
  accountId = account.id;
  token = await tokenFor(app, account);
  cardId = (await createCard(app.services.db, { name: 'Lane Card' })).id;
  await createTopUp(app.services.db, { name: 'Lane Quest' });
});
const auth = () => ({ Authorization: `Bearer ${token}` });

describe('a repeated catalog read', () => {
  it.each(['/api/top-up/list', '/api/top-up/list?page=1', `/api/card/services?card_id=CARD`, '/api/get-category'])(
    '%s: the second answer skips the app, with the same status, header lines and bytes',
    async (template) => {
      const path = template.replace('CARD', String(cardId));
      const first = await get(path, auth());
      expect(first.status).toBe(200);
      expect(first.viaApp).toBe(true);
      const second = await get(path, auth());
      expect(second.viaApp).toBe(false);
      expect(second.status).toBe(200);
      expect(comparable(second)).toEqual(comparable(first));
      expect(second.headers.map(([name]) => name)).toEqual(first.headers.map(([name]) => name));
      expect(second.body).toBe(first.body);
    },
  );

  it('is logged and counted as the full path does it, under the route pattern and the caller', async () => {
    const path = `/api/card/services?card_id=${cardId}`;
    await get(path, auth());
    const counted = await requestCount('/api/card/services');
    const laneRequestId = 'lane-request-1';
    const answer = await get(path, { ...auth(), 'X-Request-Id': laneRequestId });
    expect(answer.viaApp).toBe(false);
    expect(answer.headers).toContainEqual(['x-request-id', laneRequestId]);
    expect(await requestCount('/api/card/services')).toBe(counted + 1);
    const appRequestId = 'app-request-1';
    await get(path, { ...auth(), 'X-Request-Id': appRequestId, 'If-None-Match': '"other"' });
    const [laneLine, appLine] = [laneRequestId, appRequestId].map((id) => logLines().find((line) => line.requestId === id && line.msg === 'request'));
    expect(laneLine).toMatchObject({ level: 'info', method: 'GET', route: '/api/card/services', status: 200, durationMs: expect.any(Number) });
    expect(Object.keys(laneLine!)).toEqual(Object.keys(appLine!));
    expect({ ...laneLine, requestId: 0, time: 0, durationMs: 0 }).toEqual({ ...appLine, requestId: 0, time: 0, durationMs: 0 });
  });

  it('gives a request id of its own when the one sent is not a plain token, as the app does', async () => {
    const path = '/api/top-up/list';
    await get(path, auth());
    const answer = await get(path, { ...auth(), 'X-Request-Id': 'not valid!' });
    expect(answer.viaApp).toBe(false);
    expect(answer.headers.find(([name]) => name === 'x-request-id')?.[1]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('an answer that differs by caller (top-up details: currency, past orders)', () => {
  it("is sent by the lane from the caller's own variant, read again on every request", async () => {
    const topUp = await createTopUp(app.services.db, { name: 'Lane Details' });
    const path = `/api/top-up/details?slug=${topUp.slug}`;
    const first = await get(path, auth());
    expect(first.viaApp).toBe(true);
    const second = await get(path, auth());
    expect(second.viaApp).toBe(false);
    expect(comparable(second)).toEqual(comparable(first));
    expect(second.body).toBe(first.body);
    expect(JSON.parse(second.body).message.reviewStatic.hasAlreadyOrdered).toBe(false);

    // Another account with an order of it: another variant, kept once the app has answered it.
    const other = await createTestAccount(app);
    const otherAuth = { Authorization: `Bearer ${await tokenFor(app, other)}` };
    await createOrderFor(app.services.db, other.id, { topUpId: topUp.id, status: 0 });
    const otherFirst = await get(path, otherAuth);
    expect(otherFirst.viaApp).toBe(true);
    expect(JSON.parse(otherFirst.body).message.reviewStatic.hasAlreadyOrdered).toBe(true);
    const otherSecond = await get(path, otherAuth);
    expect(otherSecond.viaApp).toBe(false);
    expect(otherSecond.body).toBe(otherFirst.body);

    // The first caller's own order changes its variant at once: not the kept bytes of its old one.
    await createOrderFor(app.services.db, accountId, { topUpId: topUp.id, status: 0 });
    const afterOrder = await get(path, auth());
    expect(JSON.parse(afterOrder.body).message.reviewStatic.hasAlreadyOrdered).toBe(true);
    expect(afterOrder.body).toBe(otherFirst.body);
    expect(afterOrder.viaApp).toBe(false);
  });
});

describe('what the lane leaves to the app', () => {
  const path = '/api/top-up/list?page=1&per_page=5';
  beforeAll(async () => {
    const interfaceB = await get('/license-api/verify-purchase', { Host: '1.2.3.4.5' });
    expect(interfaceB.status).toBe(400);
    expect(JSON.parse(interfaceB.body)).toEqual({ status: 'error', msg: expect.any(String) });
    expect((await get(path, auth())).status).toBe(200);
  });

  it.each([
    ['no token', {}, 401],
    ['an unknown token', { Authorization: 'Bearer not-a-token' }, 401],
    ['If-None-Match', { 'If-None-Match': '"x"' }, 200],
  ] as const)('%s', async (_why, headers, status) => {
    const answer = await get(path, { ...(_why === 'If-None-Match' ? auth() : {}), ...headers });
    expect(answer.viaApp).toBe(true);
    expect(answer.status).toBe(status);
  });

  it('HEAD, and a GET with a body', async () => {
    expect((await get(path, auth(), 'HEAD')).viaApp).toBe(true);
    expect((await get(path, { ...auth(), 'Content-Length': '0' })).viaApp).toBe(false);
    const withBody = (await served.send(path, { ...auth(), 'Content-Type': 'application/json', 'Content-Length': '2' }, 'GET', '{}')).viaApp;
    expect(withBody).toBe(true);
  });

  it('a query the app has not answered yet, and one it refused', async () => {
    expect((await get('/api/top-up/list?page=2', auth())).viaApp).toBe(true);
    const refused = await get('/api/top-up/list?page=0', auth());
    expect(refused.status).toBe(422);
    expect((await get('/api/top-up/list?page=0', auth())).viaApp).toBe(true);
  });

  it('a query with parameters the route does not take: answered each time, never kept', async () => {
    // Kept, every such query would take a cache entry nobody asks for again, pushing out those everyone asks for.
    for (const path of ['/api/top-up/list?utm=a', '/api/top-up/list?page=1&utm=b', '/api/get-category?x=1']) {
      const first = await get(path, auth());
      expect(first.status, path).toBe(200);
      const again = await get(path, auth());
      expect(again.viaApp, path).toBe(true);
      expect(again.body).toBe(first.body);
    }
  });

  it('the same path asked through another host name, whose page links differ', async () => {
    const other = await get(path, { ...auth(), Host: 'store.example:8080' });
    expect(other.viaApp).toBe(true);
    expect(other.body).toContain('http://store.example:8080/');
    expect((await get(path, { ...auth(), Host: 'store.example:8080' })).viaApp).toBe(false);
  });

  it('a Host header no URL can be built from: refused with a 400 before the lane or any route, and the process goes on', async () => {
    for (const host of ['store.example:99999', '1.2.3.4.5', '999.1.1.1']) {
      const refused = await get(path, { ...auth(), Host: host });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body)).toEqual({ status: 'failed', errors: expect.any(String) });
    }
    expect((await get(path, auth())).status).toBe(200);
  });

  it('after a catalog change, until the app has answered again', async () => {
    // Kept again if the cache's 2 s ran out since the last read (a busy machine between two tests).
    await get(path, auth());
    expect((await get(path, auth())).viaApp).toBe(false);
    await app.services.catalogCache.invalidate();
    expect((await get(path, auth())).viaApp).toBe(true);
    expect((await get(path, auth())).viaApp).toBe(false);
  });

  it('a token the process has not seen yet, and one that has expired since', async () => {
    const account = await createTestAccount(app);
    const shortLived = { Authorization: `Bearer ${await tokenFor(app, account)}` };
    await app.services.db.execute(sql`update auth_tokens set expires_at = now() + interval '2 seconds' where account_id = ${account.id}`);
    expect((await get(path, shortLived)).viaApp).toBe(true);
    expect((await get(path, shortLived)).viaApp).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const answer = await get(path, shortLived);
    expect(answer.viaApp).toBe(true);
    expect(answer.status).toBe(401);
  });
});

describe('a lane that fails', () => {
  it('leaves the request to the full path, synchronously or after waiting', async () => {
    const hono = createApp(app.services);
    for (const lane of [
      () => {
        throw new Error('lane broke');
      },
      () => Promise.reject(new Error('lane broke later')),
    ]) {
      const server = serveHttp(hono.fetch, { port: 0, hostname: '127.0.0.1', lane });
      await new Promise((resolve) => server.server.once('listening', resolve));
      const answer = await fetch(`http://127.0.0.1:${(server.server.address() as AddressInfo).port}/api/top-up/list`, { headers: auth() });
      expect(answer.status).toBe(200);
      await server.drain();
    }
  });
});
