import { sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';

export type Periodic = { close: () => Promise<void> };

/** Work a periodic run leaves for after its commit. */
export type AfterCommit = () => Promise<void>;

/**
 * Runs `task` now and then `intervalMs` after each run ends, from a plain timer (nothing kept in
 * Redis, so it survives Redis losing its data). Across processes one run at a time: a process that
 * finds the transaction-scoped advisory lock `lockKey` taken skips its turn instead of queueing.
 * close() stops the timer and waits for a run in progress; a long run asks `stopping()` between its steps.
 * What must only happen once the run's writes are visible to everyone (a job that reads them, a message telling other
 * processes that something changed) is the function `task` returns: it runs after the commit, never after a rollback.
 */
export function runPeriodically(
  db: Db,
  { lockKey, intervalMs, onError }: { lockKey: number; intervalMs: number; onError: (err: unknown) => void },
  task: (tx: Tx, stopping: () => boolean) => Promise<void | AfterCommit>,
): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = db
      .transaction(async (tx) => {
        const [row] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
        return row?.locked ? await task(tx, () => stopped) : undefined;
      })
      .then((afterCommit) => afterCommit?.())
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs).unref();
      });
  };
  tick();
  return {
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
