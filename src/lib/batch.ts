/**
 * Group commit: calls that arrive while a batch is being run are gathered and run together in the next one.
 * An idle batcher starts a lone call at once (no timer): it only waits for the calls made in the same tick, unless
 * `lingerMs` asks a batch short of `maxSize` to wait that long for more. The options are read at each start: a
 * caller may change them while it runs.
 */

export type BatchOptions = {
  /** The most items one batch takes; the rest wait for the next. */
  maxSize: number;
  /** Batches run at the same time. */
  inFlight: number;
  /** How long the oldest waiting call may wait for a batch to fill before it starts short of `maxSize` (0: at once). */
  lingerMs?: number;
  /**
   * How long a call may wait for its batch to start: older calls are failed unrun when a batch starts (their callers
   * have given up), so that calls cannot pile up behind a batch that hangs. Keep it above `lingerMs`, or a lingering
   * batch fails its calls.
   */
  maxWaitMs?: number;
  /** Told the size of each batch as it starts (metrics, tests). */
  onBatch?: (size: number) => void;
};

type Waiting<In, Out> = { item: In; since: number; resolve: (value: Out) => void; reject: (reason: unknown) => void };

/**
 * Returns a function that hands its item to `run` with whatever else is waiting and resolves with that item's own
 * result. `run` settles every item of its batch, in the order given: an item's error fails that item's call only.
 */
export function batcher<In, Out>(run: (items: In[]) => Promise<PromiseSettledResult<Out>[]>, options: BatchOptions): (item: In) => Promise<Out> {
  const waiting: Waiting<In, Out>[] = [];
  let running = 0;
  let scheduled = false;
  let lingering: NodeJS.Timeout | undefined;

  const start = () => {
    scheduled = false;
    if (options.maxWaitMs !== undefined) dropExpired(waiting, performance.now() - options.maxWaitMs);
    while (running < options.inFlight && waiting.length > 0) {
      const left = waiting.length < options.maxSize ? waiting[0]!.since + (options.lingerMs ?? 0) - performance.now() : 0;
      if (left > 0) {
        lingering ??= setTimeout(() => {
          lingering = undefined;
          start();
        }, left);
        return;
      }
      // A batch starts: a wait armed for it (perhaps under other options) is over.
      clearTimeout(lingering);
      lingering = undefined;
      const batch = waiting.splice(0, options.maxSize);
      running += 1;
      options.onBatch?.(batch.length);
      run(batch.map((w) => w.item))
        .then(
          (results) => batch.forEach((w, i) => settle(w, results[i])),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          running -= 1;
          start();
        });
    }
  };

  return (item) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ item, since: performance.now(), resolve, reject });
      // Calls made in this tick go together; an idle batcher starts them within it.
      if (!scheduled && running < options.inFlight) {
        scheduled = true;
        queueMicrotask(start);
      }
    });
}

/** Fails, unrun, the calls of `waiting` (oldest first) that began before `since`. */
function dropExpired<In, Out>(waiting: Waiting<In, Out>[], since: number): void {
  let expired = 0;
  while (expired < waiting.length && waiting[expired]!.since < since) expired += 1;
  for (const w of waiting.splice(0, expired)) w.reject(new Error('waited longer than maxWaitMs for its batch'));
}

function settle<In, Out>(waiting: Waiting<In, Out>, result: PromiseSettledResult<Out> | undefined): void {
  if (result?.status === 'fulfilled') waiting.resolve(result.value);
  else waiting.reject(result ? result.reason : new Error('the batch returned no result for this item'));
}
