import { sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';

export type Periodic = {
  close: () => Promise<void>;
  /**
   * Asks for a run soon rather than at the next interval: `minGapMs` after the last run ended (at once if that has
   * passed), or right after the run in progress. Many nudges before that run make one run.
   */
  nudge: () => void;
};

/** Work a periodic run leaves for after its commit. */
export type AfterCommit = () => Promise<void>;

/**
 * Runs `task` now and then `intervalMs` after each run ends, from a plain timer (nothing kept in
 * Redis, so it survives Redis losing its data), or sooner when nudged. Across processes one run at a time: a process
 * that finds the transaction-scoped advisory lock `lockKey` taken skips its turn instead of queueing.
 * close() stops the timer and waits for a run in progress; a long run asks `stopping()` between its steps.
 * What must only happen once the run's writes are visible to everyone (a job that reads them, a message telling other
 * processes that something changed) is the function `task` returns: it runs after the commit, never after a rollback.
 */
export function runPeriodically(
  db: Db,
  { lockKey, intervalMs, minGapMs = 0, onError }: { lockKey: number; intervalMs: number; minGapMs?: number; onError: (err: unknown) => void },
  task: (tx: Tx, stopping: () => boolean) => Promise<void | AfterCommit>,
): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms); null while a run is in progress. */
  let dueAt: number | null = null;
  let nudgedWhileRunning = false;
  let lastEnded = 0;
  let running: Promise<void> = Promise.resolve();
  const runAt = (at: number) => {
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(tick, Math.max(0, at - Date.now())).unref();
  };
  const tick = () => {
    dueAt = null;
    running = db
      .transaction(async (tx) => {
        const [row] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
        return row?.locked ? await task(tx, () => stopped) : undefined;
      })
      .then((afterCommit) => afterCommit?.())
      .catch(onError)
      .finally(() => {
        lastEnded = Date.now();
        if (stopped) return;
        runAt(lastEnded + (nudgedWhileRunning ? minGapMs : intervalMs));
        nudgedWhileRunning = false;
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
      if (dueAt === null) nudgedWhileRunning = true;
      else if (lastEnded + minGapMs < dueAt) runAt(lastEnded + minGapMs);
    },
  };
}
