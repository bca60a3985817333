import { pubSub, type RedisClient } from './redis.js';

const MAX_ENTRIES = 5000;

/** `settled`: the loaded value once the load has resolved, for peek(). */
type Entry = { expires: number; value: Promise<unknown>; settled?: { value: unknown } };

/**
 * An in-process read cache whose entries live at most `ttlMs` and are dropped in every process
 * when any process calls invalidate() (Redis pub/sub, sharded on a cluster). Until Redis has confirmed the subscription
 * (at start, and again after every reconnect) a missed invalidation could go unnoticed, so the cache is bypassed rather
 * than trusted: a connection that is up is not yet a subscription that hears. Full, it lets go of the entry
 * used longest ago: a burst of keys asked for once pushes out others one by one, never the whole cache at once.
 */
export class SharedCache {
  private readonly entries = new Map<string, Entry>();
  /** Redis confirmed the subscription on the current connection. */
  private subscribed = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly publisher: RedisClient,
    private readonly channel: string,
    private readonly ttlMs: number,
  ) {
    pubSub.onMessage(subscriber, (from) => from === channel && this.entries.clear());
    const subscribe = () => pubSub.subscribe(subscriber, channel).then(() => void (this.subscribed = true), () => {});
    // Anything cached before a gap may be stale; a reconnect is trusted again once its subscription is confirmed.
    subscriber.on('close', () => (this.subscribed = false));
    subscriber.on('ready', () => {
      this.entries.clear();
      void subscribe();
    });
    void subscribe();
  }

  /** Whether entries are kept and served: the subscription that hears invalidations is confirmed and up. */
  get live(): boolean {
    return this.subscribed && this.subscriber.status === 'ready';
  }

  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (!this.live) return load();
    const now = Date.now();
    const hit = this.used(key);
    if (hit && hit.expires > now) return hit.value as Promise<T>;
    const value = load();
    // Keys can come from request input (slugs, ids): bound the memory they can take.
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const entry: Entry = { expires: now + this.ttlMs, value };
    this.entries.set(key, entry);
    value.then(
      (loaded) => void (entry.settled = { value: loaded }),
      // A failed load is not remembered.
      () => this.entries.get(key) === entry && this.entries.delete(key),
    );
    return value;
  }

  /**
   * The value under `key` if it is loaded and as fresh as get() would serve it, without waiting or loading:
   * undefined when get() would have to wait for a load (or the cache is bypassed).
   */
  peek<T>(key: string): T | undefined {
    if (!this.live) return undefined;
    const hit = this.used(key);
    return hit && hit.expires > Date.now() ? (hit.settled?.value as T | undefined) : undefined;
  }

  /** The entry under `key`, moved to the end of the map's order: the first entry is the one used longest ago. */
  private used(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** Drops every entry here and, through Redis, in every other process. */
  async invalidate(): Promise<void> {
    this.entries.clear();
    await pubSub.publish(this.publisher, this.channel, 'invalidate').catch(() => {});
  }

  close(): void {
    this.entries.clear();
    this.subscriber.disconnect();
  }
}
