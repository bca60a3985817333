import { sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';

export type Periodic = {
  close: () => Promise<void>;
  /**
   * Asks for a run soon rather than at the next interval: `minGapMs` after the last run ended (at once if that has
   * passed), or `minGapMs` after the run in progress ends. Many nudges before that run make one run.
   */
  nudge: () => void;
};

/** Work a periodic run leaves for after its commit. */
export type AfterCommit = () => Promise<void>;

/**
 * Runs `task` now and then `intervalMs` after each run ends, from a plain timer (nothing kept in
 * Redis, so it survives Redis losing its data), or sooner when nudged. Across processes one run at a time: a process
 * that finds the transaction-scoped advisory lock `lockKey` taken skips its turn instead of queueing (a nudged run that
 * skips tries once more `minGapMs` later: the other process's run may have read before what the nudge was about).
 * close() stops the timer and waits for a run in progress; a long run asks `stopping()` between its steps.
 * What must only happen once the run's writes are visible to everyone (a job that reads them, a message telling other
 * processes that something changed) is the function `task` returns: it runs after the commit, never after a rollback.
 */
export function runPeriodically(
  db: Db,
  { lockKey, intervalMs, minGapMs = 0, onError }: { lockKey: number; intervalMs: number; minGapMs?: number; onError: (err: unknown) => void },
  task: (tx: Tx, stopping: () => boolean) => Promise<void | AfterCommit>,
): Periodic {
  const gapMs = Math.min(minGapMs, intervalMs);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // Times on the monotonic clock: a wall clock set back must not hold the next run.
  /** When the timer fires; null while a run is in progress. */
  let dueAt: number | null = null;
  /**
   * Whether the next run was asked for by a nudge, before it was due or while the run before it was in progress (it
   * comes `gapMs` after that run, and tries once more if another process holds the lock).
   */
  let nextNudged = false;
  let lastEnded = 0;
  let running: Promise<void> = Promise.resolve();
  const runAt = (at: number) => {
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(tick, Math.max(0, at - performance.now())).unref();
  };
  const tick = () => {
    const nudged = nextNudged;
    [dueAt, nextNudged] = [null, false];
    let locked = false;
    running = db
      .transaction(async (tx) => {
        const [row] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
        locked = row?.locked === true;
        return locked ? await task(tx, () => stopped) : undefined;
      })
      .then((afterCommit) => afterCommit?.())
      .catch(onError)
      .finally(() => {
        lastEnded = performance.now();
        if (stopped) return;
        // A nudged run that found the lock taken tries once more, not nudged itself (it does not try again and again).
        runAt(lastEnded + (nextNudged || (nudged && !locked) ? gapMs : intervalMs));
      });
  };
  tick();
  return {
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    nudge: () => {
      if (stopped) return;
      nextNudged = true;
      // While a run is in progress (no timer), its end schedules the next.
      if (dueAt !== null && lastEnded + gapMs < dueAt) runAt(lastEnded + gapMs);
    },
  };
}
