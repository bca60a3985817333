/**
 * The order lists' page cache: a page read again while nothing it shows has changed comes from the API process's
 * memory, and every way the service changes what a page shows drops the account's stamp (or every account's) before
 * it answers, so the next read shows the change at once. ORDER_PAGES_CACHE_MS is a minute here, so that only a stamp
 * can explain a fresh page.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminOf, buyer, expectJson, type Json } from '../helpers/api.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { cardCodes } from '../../src/db/schema.js';
import { sealCode } from '../../src/modules/inventory/codes.js';
import { restockCardService } from '../../src/modules/fulfilment/cards.js';
import { statusObserver } from '../../src/modules/order-state/events.js';
import { ChangeStamps } from '../../src/lib/change-stamps.js';
import { connectRedis } from '../../src/lib/redis.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workers: true, env: { ORDER_PAGES_CACHE_MS: '60000' } });
});
afterAll(async () => app?.close());

type Api = Awaited<ReturnType<typeof buyer>>['api'];

const firstPage = async (api: Api): Promise<Json> => (await expectJson(await api.get('/api/get-card/orders'), 200)).message;
const entry = async (api: Api, utr: string): Promise<Json | undefined> => (await firstPage(api)).data.find((o: Json) => o.utr === utr);
/** The order as order/details reads it: never from the page cache. */
const details = async (api: Api, utr: string): Promise<Json> => (await expectJson(await api.get(`/api/order/details?utr=${utr}`), 200)).message;

/** order_pages_served_total{from} of this process. */
async function servedFrom(from: 'memory' | 'database'): Promise<number> {
  const line = (await app.services.metrics.render()).split('\n').find((l) => l.startsWith(`order_pages_served_total{from="${from}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

async function addCodes(serviceId: number, codes: string[]): Promise<void> {
  const key = app.services.config.codeEncryptionKey;
  for (const code of codes) await app.services.db.insert(cardCodes).values({ cardServiceId: serviceId, ...sealCode(key, code) });
}

async function placeCard(api: Api, serviceId: number, quantity = 1): Promise<string> {
  return (await expectJson(await api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [quantity] }), 200)).message.utr;
}

async function settled(api: Api, utr: string, status: number): Promise<void> {
  await vi.waitFor(async () => expect((await details(api, utr)).status).toBe(status), { timeout: 20_000, interval: 100 });
}

describe('order list pages kept in memory', () => {
  it('serves a page again from memory, and a change nobody told of only once the page is older than ORDER_PAGES_CACHE_MS', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '3.00' }] });
    await addCodes(card.services[0]!.id, ['KEPT-1']);
    const { api, keys } = await buyer(app);
    const utr = await placeCard(api, card.services[0]!.id);
    await settled(api, utr, 1);
    expect((await entry(api, utr))!.status).toBe(1);

    // Behind the service's back: no stamp is dropped, so the page read before is served again (and counted so).
    await app.services.sql`update orders set status = 2 where utr = ${utr}`;
    const fromMemory = await servedFrom('memory');
    expect((await entry(api, utr))!.status).toBe(1);
    expect(await servedFrom('memory')).toBe(fromMemory + 1);
    expect((await details(api, utr)).status).toBe(2);

    // A page is kept ORDER_PAGES_CACHE_MS at most, whatever its stamp says.
    const now = Date.now();
    const later = vi.spyOn(Date, 'now').mockReturnValue(now + 60_001);
    try {
      expect((await entry(api, utr))!.status).toBe(2);
    } finally {
      later.mockRestore();
    }
    await app.services.sql`update orders set status = 1 where utr = ${utr}`;
    await app.services.orderPages.changed([keys.id]);
    expect((await entry(api, utr))!.status).toBe(1);
  });

  it("keeps a page sealed: none of its codes in the clear in the process's memory, and served from memory as read", async () => {
    const card = await createCard(app.services.db, { services: [{ price: '4.00' }] });
    await addCodes(card.services[0]!.id, ['CLEAR-NEVER-1', 'CLEAR-NEVER-2']);
    const { api } = await buyer(app);
    const utr = await placeCard(api, card.services[0]!.id, 2);
    await settled(api, utr, 1);

    // What the cache is handed to keep, whatever its shape.
    const kept: unknown[] = [];
    const cache = app.services.orderPageCache;
    const get = cache.get.bind(cache);
    const spy = vi.spyOn(cache, 'get').mockImplementation((key, stampNow, load) =>
      get(key, stampNow, async () => {
        const page = await load();
        kept.push(page);
        return page;
      }),
    );
    try {
      const fromDatabase = await firstPage(api);
      expect(fromDatabase.data[0].order_details[0].card_codes).toEqual(['CLEAR-NEVER-1', 'CLEAR-NEVER-2']);
      expect(kept).toHaveLength(1);
      const held = Object.values(kept[0] as object)
        .map((value: unknown) => (Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value)))
        .join(' ');
      expect(held).not.toContain('CLEAR-NEVER');
      expect(held).toContain(utr); // the page's cursor, kept beside it
      expect(await firstPage(api)).toEqual(fromDatabase);
      expect(kept).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('shows a new order at once, and the codes the workers gave it once they say so', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '2.00' }] });
    await addCodes(card.services[0]!.id, ['NEW-1', 'NEW-2']);
    const { api } = await buyer(app);
    const first = await placeCard(api, card.services[0]!.id);
    await settled(api, first, 1);
    expect((await firstPage(api)).total).toBe(1);

    const second = await placeCard(api, card.services[0]!.id);
    const page = await firstPage(api);
    expect(page.total).toBe(2);
    expect(page.data[0].utr).toBe(second);

    await settled(api, second, 1);
    const done = await entry(api, second);
    expect(done!.status).toBe(1);
    expect(done!.order_details[0].card_codes).toEqual(['NEW-2']);
  });

  it('shows the codes a restock gives an order that stays stock_short, and an operator refund', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    const { api } = await buyer(app);
    const utr = await placeCard(api, serviceId, 3);
    await settled(api, utr, 3);
    expect((await entry(api, utr))!.order_details[0]).toMatchObject({ card_codes: [], stock_short: '3 codes will be sent as soon as stock arrives.' });

    // The restock worker's own function and observer: one code of three, so the order's status stays.
    await addCodes(serviceId, ['SHORT-1']);
    const { logger, metrics, orderPages } = app.services;
    await restockCardService(app.services.db, serviceId, statusObserver({ logger, metrics, orderPages }));
    expect((await details(api, utr)).status).toBe(3);
    expect((await entry(api, utr))!.order_details[0]).toMatchObject({ card_codes: ['SHORT-1'], stock_short: '2 codes will be sent as soon as stock arrives.' });

    await expectJson(await adminOf(app)('POST', `/orders/${utr}/refund`, { reason: 'Out of stock.' }), 200);
    expect((await entry(api, utr))!.status).toBe(2);
  });

  it("shows the caller's review and a renamed product at once, in every account's pages", async () => {
    const card = await createCard(app.services.db, { name: 'Old name', services: [{ price: '1.00' }] });
    await addCodes(card.services[0]!.id, ['REV-1', 'REV-2']);
    const reviewer = await buyer(app);
    const other = await buyer(app);
    const reviewed = await placeCard(reviewer.api, card.services[0]!.id);
    const seen = await placeCard(other.api, card.services[0]!.id);
    await settled(reviewer.api, reviewed, 1);
    await settled(other.api, seen, 1);
    expect((await entry(reviewer.api, reviewed))!.review_user_info).toEqual([]);
    expect((await entry(other.api, seen))!.order_details[0].rating).toBe(0);

    await expectJson(await reviewer.api.postJson('/api/card/review', { card_id: card.id, rating: 4, comment: 'Fine.' }), 200);
    expect((await entry(reviewer.api, reviewed))!.review_user_info).toEqual([{ review: { comment: 'Fine.', rating: 4, status: 'active' } }]);
    expect((await entry(other.api, seen))!.order_details[0].rating).toBe(4);

    await expectJson(await adminOf(app)('PATCH', `/cards/${card.id}`, { name: 'New name' }), 200);
    expect((await entry(other.api, seen))!.order_details[0].card).toBe('New name');
  });

  it('never serves a page kept under a stamp Redis lost', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    await addCodes(card.services[0]!.id, ['LOST-1']);
    const { api } = await buyer(app);
    const utr = await placeCard(api, card.services[0]!.id);
    await settled(api, utr, 1);
    expect((await entry(api, utr))!.status).toBe(1);
    await app.services.sql`update orders set status = 2 where utr = ${utr}`;

    // As a Redis restarted without persistence: every stamp gone.
    const keys = await app.services.redis.keys(`${app.services.config.BULLMQ_PREFIX}:{order-pages}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await app.services.redis.del(...keys);
    expect((await entry(api, utr))!.status).toBe(2);
  });

  it('gives no stamp while Redis cannot be reached, so a page is read from the database', async () => {
    // Nothing listens on port 1: the client never gets ready. Past its first moments, a drop does not wait for it.
    const unreachable = connectRedis({ kind: 'server', url: 'redis://127.0.0.1:1' }, 'producer');
    unreachable.on('error', () => {});
    try {
      const away = new ChangeStamps(unreachable, 'nowhere', 'stamps', 200);
      expect(await away.current(['1'])).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      for (let i = 0; i < 5; i += 1) await away.changed(['1']);
      expect(Date.now() - started).toBeLessThan(150);
    } finally {
      unreachable.disconnect();
    }
    const stamps = new ChangeStamps(app.services.redis, app.services.config.BULLMQ_PREFIX, 'stamps-test');
    const [first] = (await stamps.current(['a']))!;
    expect((await stamps.current(['a']))![0]).toBe(first);
    await stamps.changed(['a']);
    expect((await stamps.current(['a']))![0]).not.toBe(first);
  });

  it('takes the stamps of reads made together in one MGET, each read getting its own keys', async () => {
    const redis = connectRedis({ kind: 'server', url: app.services.config.REDIS_URL }, 'producer');
    try {
      await new Promise((resolve) => redis.once('ready', resolve));
      const stamps = new ChangeStamps(redis, app.services.config.BULLMQ_PREFIX, 'batch-test');
      const mget = vi.spyOn(redis, 'mget');
      const reads = await Promise.all(Array.from({ length: 20 }, (_, i) => stamps.current(['all', String(i % 5)])));
      expect(mget).toHaveBeenCalledTimes(1);
      expect(new Set(reads.map((read) => read![0])).size).toBe(1);
      expect(new Set(reads.map((read) => read![1])).size).toBe(5);
      reads.forEach((read, i) => expect(read![1]).toBe(reads[i % 5]![1]));
      // A read made while a batch is on its way waits for the next one: it sees a drop made before it, never the stamp
      // the batch on its way reads.
      const onItsWay = stamps.current(['3']);
      // Its batch starts within this tick: its MGET is written before the drop's DEL.
      await Promise.resolve();
      expect(mget).toHaveBeenCalledTimes(2);
      const drop = stamps.changed(['3']);
      const next = stamps.current(['3']);
      await drop;
      expect((await onItsWay)![0]).toBe(reads[3]![1]);
      expect((await next)![0]).not.toBe(reads[3]![1]);
      expect(mget).toHaveBeenCalledTimes(3);
    } finally {
      redis.disconnect();
    }
  });

  it('waits at most its timeout for a Redis that hangs, and for the first connection of a process that has just started', async () => {
    const redis = new URL(app.services.config.REDIS_URL);
    const proxy = await tcpProxy(Number(redis.port || 6379), redis.hostname);
    const prefix = app.services.config.BULLMQ_PREFIX;
    // A command line's first change: its connection is still being made, and the drop waits for it.
    const starting = connectRedis({ kind: 'server', url: `redis://127.0.0.1:${proxy.port()}` }, 'producer');
    starting.on('error', () => {});
    try {
      const reader = new ChangeStamps(app.services.redis, prefix, 'hang-test');
      const [before] = (await reader.current(['b']))!;
      const stamps = new ChangeStamps(starting, prefix, 'hang-test', 300);
      expect(starting.status).not.toBe('ready');
      void stamps.changed(['b']);
      await stamps.settled();
      expect((await reader.current(['b']))![0]).not.toBe(before);

      // Connected, but nothing answers: no stamp (the page is read from the database) and no drop, each within 300 ms.
      proxy.hang();
      const started = Date.now();
      expect(await stamps.current(['b'])).toBeNull();
      await stamps.changed(['b']);
      expect(Date.now() - started).toBeLessThan(3000);
      // Reads made meanwhile: one MGET goes out and hangs; the reads that waited behind it as long as the timeout are
      // dropped unrun, not sent (nor kept) once it gives up.
      const mget = vi.spyOn(starting, 'mget');
      const reads = await Promise.all(Array.from({ length: 100 }, () => stamps.current(['b'])));
      expect(reads.every((read) => read === null)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(mget).toHaveBeenCalledTimes(1);
    } finally {
      starting.disconnect();
      await proxy.close();
    }
  });
});
