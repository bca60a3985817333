/** What an entry costs beyond its value and key (the map's slot, the entry object, its stamp), roughly, in units of `sizeOf`. */
const ENTRY_OVERHEAD = 200;

/** What a cached value is kept under: the stamp it was read under, when its read began, its size (with its key's). */
type Entry<T> = { stamp: string; readAt: number; value: T; size: number };

/**
 * An in-process cache whose entries are served only while the stamp they were read under is still the current one
 * (see ChangeStamps) and for at most `maxAgeMs` since their read began: the age bounds what a lost stamp drop can
 * leave stale. Entries are bounded by their total size (`sizeOf`, plus their keys' length and a fixed overhead, so that
 * many small entries under keys from request input are bounded too); full, it lets go of the entries used longest ago.
 * A `maxAgeMs` of 0 keeps nothing.
 */
export class StampedCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private size = 0;

  constructor(
    private readonly options: {
      maxAgeMs: number;
      maxSize: number;
      sizeOf: (value: T) => number;
      /** Told of every get: served from memory, or loaded. */
      onServed?: (from: 'memory' | 'load') => void;
    },
    private readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * The value under `key`: kept, when it was read under the stamp `stampNow` gives and is young enough; else `load`'s,
   * kept under that stamp. `stampNow` is asked before `load` runs (a change committed after it drops the stamp); a
   * null stamp (unknown now) loads without keeping.
   */
  async get(key: string, stampNow: () => Promise<string | null>, load: () => Promise<T>): Promise<T> {
    const stamp = this.options.maxAgeMs === 0 ? null : await stampNow();
    const readAt = this.now();
    const held = stamp === null ? undefined : this.entries.get(key);
    if (held && held.stamp === stamp && readAt - held.readAt < this.options.maxAgeMs) {
      // Moved to the end: the first entry is the one used longest ago.
      this.entries.delete(key);
      this.entries.set(key, held);
      this.options.onServed?.('memory');
      return held.value;
    }
    this.options.onServed?.('load');
    const value = await load();
    if (stamp === null) return value;
    this.keep(key, { stamp, readAt, value, size: this.options.sizeOf(value) + key.length + ENTRY_OVERHEAD });
    return value;
  }

  private keep(key: string, entry: Entry<T>): void {
    this.drop(key);
    if (entry.size > this.options.maxSize) return;
    while (this.size + entry.size > this.options.maxSize) this.drop(this.entries.keys().next().value!);
    this.entries.set(key, entry);
    this.size += entry.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.size -= entry.size;
  }
}
