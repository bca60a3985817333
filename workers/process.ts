import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../src/startup/index.js';
import { until } from '../src/lib/deadline.js';
import type { ProcessSeries } from '../src/lib/metrics.js';
import type { Services } from '../src/runtime/services.js';
import type { RunningWorkers } from './index.js';

/** What `npm start` and its worker process say to each other over the IPC channel. */
export type ToWorkerProcess = { type: 'series'; id: number };
export type FromWorkerProcess = { type: 'ready' } | { type: 'series'; id: number; series: ProcessSeries };

/** The worker entry beside this module: workers/main.ts under tsx, dist/workers/main.js once compiled. */
const ENTRY = fileURLToPath(new URL(`./main${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url));
const RESTART_DELAY_MS = 1000;
const PEER_ANSWER_MS = 1000;

/**
 * `npm start`'s workers, in a child process of their own: fulfilment gets its own event loop (and core)
 * instead of adding to the latency of the requests it shares a loop with. The child runs `npm run worker`'s
 * entry with the same environment; the API's /metrics includes its series (asked over IPC at each scrape).
 * `ready` settles once the first one has started its workers, and rejects if it ended before; a worker
 * process that ends later is started again. One whose parent has gone shuts down by itself.
 */
export function startWorkerProcess({ logger, metrics }: Services): RunningWorkers & { ready: Promise<void> } {
  let closing = false;
  let restart: NodeJS.Timeout | undefined;
  const answers = new Map<number, (series: ProcessSeries) => void>();
  let asked = 0;

  const forkWorkers = () => {
    // Its own process group: a Ctrl-C in the terminal reaches only `npm start`, which then stops it in order.
    const child = fork(ENTRY, { detached: true });
    child.on('message', (message: FromWorkerProcess) => {
      if (message.type !== 'series') return;
      answers.get(message.id)?.(message.series);
      answers.delete(message.id);
    });
    child.once('exit', () => {
      for (const answer of answers.values()) answer([]);
      answers.clear();
    });
    return child;
  };
  const restartLater = () => {
    restart = setTimeout(() => {
      const child = (current = forkWorkers());
      readiness(child).then(
        () => restartWhenItEnds(child),
        (err: Error) => {
          if (closing) return;
          logger.error({ err }, 'the worker process did not start; trying again');
          restartLater();
        },
      );
    }, RESTART_DELAY_MS);
  };
  const restartWhenItEnds = (child: ChildProcess) =>
    child.once('exit', (code, signal) => {
      if (closing) return;
      logger.error({ code, signal }, `the worker process ended; starting another in ${RESTART_DELAY_MS} ms`);
      restartLater();
    });

  let current = forkWorkers();
  const first = current;
  // Stopped while still starting: the shutdown under way ends the process, so `ready` need not settle.
  const ready = readiness(first).then(
    () => void restartWhenItEnds(first),
    (err: unknown) => (closing ? new Promise<void>(() => {}) : Promise.reject(err)),
  );

  metrics.addPeer(
    () =>
      new Promise((resolve) => {
        if (!current.connected) return resolve([]);
        const id = ++asked;
        answers.set(id, resolve);
        current.send({ type: 'series', id } satisfies ToWorkerProcess);
        // A worker process still starting does not listen yet: its series are left out of this scrape.
        setTimeout(() => {
          answers.get(id)?.([]);
          answers.delete(id);
        }, PEER_ANSWER_MS).unref();
      }),
  );

  return {
    ready,
    close: async (deadline = Date.now() + 10_000) => {
      closing = true;
      clearTimeout(restart);
      if (current.exitCode !== null || current.signalCode !== null) return;
      const exited = once(current, 'exit');
      current.kill('SIGTERM');
      await until(deadline, exited);
      // Past the deadline: the jobs it still held run again once their locks expire.
      if (current.exitCode === null && current.signalCode === null) current.kill('SIGKILL');
    },
  };
}

/** Settles when `child` says it is ready; rejects if it ends first (its reason is on stderr). */
function readiness(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const ended = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new StartupError(`the worker process ended before it was ready (${signal ?? `exit code ${code}`})`));
    child.once('exit', ended);
    child.on('message', function ready(message: FromWorkerProcess) {
      if (message.type !== 'ready') return;
      child.off('exit', ended);
      child.off('message', ready);
      resolve();
    });
  });
}
