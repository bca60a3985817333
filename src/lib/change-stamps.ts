import { randomBytes } from 'node:crypto';
import { batcher } from './batch.js';
import { withTimeout } from './deadline.js';
import type { RedisClient } from './redis.js';

/** A stamp outlives any cache entry read under it by far; an idle key then goes, and comes back as a new stamp. */
const STAMP_SECONDS = 3600;

/** New stamps: this process's random prefix and a counter, unique across processes without a random draw each. */
const PROCESS_NONCE = randomBytes(9).toString('base64');
let stampsMade = 0;
const freshStamp = () => `${PROCESS_NONCE}.${(stampsMade += 1)}`;

/**
 * Stamps in Redis that tell a reader whether what it read under a key may have changed since, in any process. A reader
 * takes the key's stamp BEFORE it reads and keeps the stamp with what it read; a writer drops the key's stamp AFTER its
 * change has committed. A stamp still the same then means no change committed since the read began, save one whose
 * writer has not yet dropped it (a change is not seen before its writer says so); a key without a stamp gets a new
 * one, so a Redis that lost its keys (a restart, an eviction) never matches an old read.
 *
 * Every key of one set of stamps is in one hash slot (`{space}`), so that a read takes all of its stamps in one MGET,
 * on a cluster too; the reads that arrive while one MGET is on its way go together in the next (a group commit): on a
 * busy API process, writing a command to Redis's socket per read was a third of an order list's CPU. On a connection
 * that fails fast (the producers'), and never longer than `timeoutMs`: while Redis is away or hangs a reader gets no
 * stamp, and reads without its cache; a writer's drop waits for a connection still being made (a command line's first
 * moments) up to `timeoutMs`, and is lost after that, which is why what is cached under a stamp also has a maximum age.
 */
export class ChangeStamps {
  /** Drops on their way: a process that stops waits for them (settled), so its last changes are told. */
  private readonly dropping = new Set<Promise<void>>();
  /**
   * Resolves once the connection has first been ready, or `timeoutMs` after this was made, whichever comes first: a
   * command line's change made at once waits for its connection, a process that started while Redis was away never does.
   */
  private readonly firstReady: Promise<void>;
  /**
   * The reads waiting together, their keys read once. A batch gives up after `timeoutMs`, and a read that waited half
   * that for its batch is dropped unrun (its caller gets no stamp): a command that never comes back (a hung Redis) holds
   * the reads after it for `timeoutMs` at most, and they do not pile up.
   */
  private readonly read: (keys: readonly string[]) => Promise<string[]>;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly space: string,
    private readonly timeoutMs = 500,
  ) {
    this.firstReady =
      redis.status === 'ready'
        ? Promise.resolve()
        : new Promise((resolve) => {
            const gaveUp = setTimeout(resolve, timeoutMs);
            gaveUp.unref();
            redis.once('ready', () => {
              clearTimeout(gaveUp);
              resolve();
            });
          });
    this.read = batcher(
      async (reads) => {
        const keys = [...new Set(reads.flat())];
        const stamps = await withTimeout(timeoutMs, this.stampsOf(keys));
        const stampOf = new Map(keys.map((key, i) => [key, stamps[i]!]));
        return reads.map((read) => ({ status: 'fulfilled', value: read.map((key) => stampOf.get(key)!) }));
      },
      // Half the timeout: a timer fires a little early by the clock that dates the reads, and a read that waited that
      // long has little of its own timeout left.
      { maxSize: 64, inFlight: 1, maxWaitMs: timeoutMs / 2 },
    );
  }

  /** The stamp of each key (a new one where there is none), in the order of `keys`; null when Redis cannot say. */
  async current(keys: readonly string[]): Promise<string[] | null> {
    if (this.redis.status !== 'ready') return null;
    try {
      return await withTimeout(this.timeoutMs, this.read(keys));
    } catch {
      return null;
    }
  }

  private async stampsOf(keys: readonly string[]): Promise<string[]> {
    const held = await this.redis.mget(...keys.map((key) => this.keyOf(key)));
    if (held.every((stamp) => stamp !== null)) return held as string[];
    // SET NX GET (Redis 7) answers the stamp another reader has just set, or sets this one and answers nil.
    return Promise.all(
      held.map(async (stamp, i) => {
        if (stamp !== null) return stamp;
        const fresh = freshStamp();
        const raced = await this.redis.call('SET', this.keyOf(keys[i]!), fresh, 'NX', 'GET', 'EX', String(STAMP_SECONDS));
        return typeof raced === 'string' ? raced : fresh;
      }),
    );
  }

  /** Drops the stamps of `keys`: whatever was read under them is not served again. Never throws. */
  async changed(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const drop = withTimeout(this.timeoutMs, this.drop(keys)).catch(() => {});
    this.dropping.add(drop);
    await drop;
    this.dropping.delete(drop);
  }

  private async drop(keys: readonly string[]): Promise<void> {
    // Only the first connection is waited for, and only in the first moments: a Redis that is away fails the drop at
    // once, as it fails the queue's producers, so that placement does not wait for it.
    await this.firstReady;
    await this.redis.del(...keys.map((key) => this.keyOf(key)));
  }

  /** Resolves once every drop on its way has been made or given up. */
  async settled(): Promise<void> {
    await Promise.all(this.dropping);
  }

  private keyOf(key: string): string {
    return `${this.prefix}:{${this.space}}:${key}`;
  }
}

/**
 * Stamps of what belongs to one owner (an account's orders, say) or to all of them at once (the catalog every order
 * shows): an owner's stamp is the pair of its own and the one every owner shares.
 */
export type OwnedStamps = {
  /** Once a change to what these owners hold has committed. Never throws. */
  changed(ownerIds: readonly number[]): Promise<void>;
  /** Once a change to what every owner's reads show has committed. Never throws. */
  allChanged(): Promise<void>;
  /** The stamp an owner's read is taken under now; null when it cannot be known (read, don't keep). */
  stampOf(ownerId: number): Promise<string | null>;
};

/** The key every owner shares; an owner's own is its id. */
const EVERY_OWNER = 'all';

export const ownedStamps = (stamps: ChangeStamps): OwnedStamps => ({
  changed: (ownerIds) => stamps.changed([...new Set(ownerIds)].map(String)),
  allChanged: () => stamps.changed([EVERY_OWNER]),
  stampOf: async (ownerId) => (await stamps.current([EVERY_OWNER, String(ownerId)]))?.join(' ') ?? null,
});
