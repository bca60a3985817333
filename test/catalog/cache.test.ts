import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SharedCache } from '../../src/lib/shared-cache.js';
import { ownRedis } from '../helpers/redis-server.js';

const channel = `test:${randomBytes(6).toString('hex')}:catalog-changed`;
const connections: Redis[] = [];
const connect = () => {
  const redis = new Redis(inject('redisUrl'));
  connections.push(redis);
  return redis;
};
/** One cache per simulated process, each with its own subscriber, sharing a publisher connection. */
const publisher = connect();
const processCache = (ttlMs = 60_000) => new SharedCache(connect(), publisher, channel, ttlMs);
/** Until its subscription is confirmed a cache keeps nothing (see the last test). */
const live = async (cache: SharedCache) => {
  while (!cache.live) await new Promise((r) => setTimeout(r, 10));
};

afterAll(() => connections.forEach((c) => c.disconnect()));

describe('SharedCache (catalog cache)', () => {
  it('serves a value from memory until it expires', async () => {
    const cache = processCache(50);
    await live(cache);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', load)).toBe(1);
    expect(await cache.get('k', load)).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(await cache.get('k', load)).toBe(2);
  });

  it('drops entries in every process when one invalidates', async () => {
    const [a, b] = [processCache(), processCache()];
    await Promise.all([a, b].map(live));
    let version = 1;
    const load = async () => version;
    expect(await a.get('price', load)).toBe(1);
    expect(await b.get('price', load)).toBe(1);
    version = 2;
    await a.invalidate();
    await expect.poll(() => b.get('price', load), { timeout: 2000 }).toBe(2);
    expect(await a.get('price', load)).toBe(2);
  });

  it('full, lets go of the entry used longest ago: a burst of keys asked for once never empties it', async () => {
    const cache = processCache();
    await live(cache);
    let hotLoads = 0;
    const hot = async () => ++hotLoads;
    await cache.get('hot', hot);
    // Far more keys than it holds (5000), each asked for once, while one key is asked for now and then.
    for (let i = 0; i < 12_000; i++) {
      await cache.get(`once:${i}`, async () => i);
      if (i % 1000 === 0) await cache.get('hot', hot);
    }
    expect(hotLoads).toBe(1);
    // The oldest of the burst are the ones let go.
    let reloaded = false;
    await cache.get('once:0', async () => (reloaded = true));
    expect(reloaded).toBe(true);
  });

  it('does not remember a failed load', async () => {
    const cache = processCache();
    await live(cache);
    await expect(cache.get('x', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.get('x', async () => 'fresh')).toBe('fresh');
  });

  it('is bypassed while its subscription is down, since an invalidation could be missed', async () => {
    const subscriber = connect();
    const cache = new SharedCache(subscriber, publisher, channel, 60_000);
    await live(cache);
    const closed = new Promise((r) => subscriber.once('end', r));
    subscriber.disconnect();
    await closed;
    let loads = 0;
    await cache.get('k', async () => ++loads);
    await cache.get('k', async () => ++loads);
    expect(loads).toBe(2);
  });

  it('keeps nothing until Redis has confirmed its subscription, though the connection is up', async () => {
    const server = await ownRedis();
    const subscriber = new Redis(server.url);
    const admin = new Redis(server.url);
    try {
      while (subscriber.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
      // The server takes no command for a while: the subscription the cache asks for waits unanswered.
      await admin.call('client', 'pause', '1500', 'all');
      const cache = new SharedCache(subscriber, admin, channel, 60_000);
      let loads = 0;
      await cache.get('k', async () => ++loads);
      await cache.get('k', async () => ++loads);
      expect(loads).toBe(2);
      await live(cache);
      await cache.get('k', async () => ++loads);
      await cache.get('k', async () => ++loads);
      expect(loads).toBe(3);
    } finally {
      subscriber.disconnect();
      admin.disconnect();
      await server.close();
    }
  });
});
