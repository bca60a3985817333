import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../src/startup/index.js';
import { until } from '../src/lib/deadline.js';
import type { ProcessSeries } from '../src/lib/metrics.js';
import type { Services } from '../src/runtime/services.js';
import type { RunningWorkers } from './index.js';
import { LOAD_INTERVAL_MS } from '../src/modules/fulfilment/index.js';

/** What `npm start` and its worker process say to each other over the IPC channel. */
export type ToWorkerProcess = { type: 'series'; id: number } | { type: 'load'; inFlight: number };
export type FromWorkerProcess = { type: 'ready' } | { type: 'series'; id: number; series: ProcessSeries };

/** The worker entry beside this module: workers/main.ts under tsx, dist/workers/main.js once compiled. */
const ENTRY = fileURLToPath(new URL(`./main${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url));
/**
 * The wait before the next start after a worker process ended, doubled after each start that fails or ends soon after
 * it got ready, up to the cap; back to the first once a process has stayed up `stable`.
 */
const RESTART_DELAY_MS = { first: 1000, max: 30_000, stable: 30_000 };
const PEER_ANSWER_MS = 1000;

/**
 * `npm start`'s workers, in a child process of their own: fulfilment gets its own event loop (and core)
 * instead of adding to the latency of the requests it shares a loop with. The child runs `npm run worker`'s
 * entry with the same environment; the API's /metrics includes its series (asked over IPC at each scrape).
 *
 * The child is supervised: one that ends, before it was ready (Redis or PostgreSQL away during its start) or
 * after, is started again with back-off, while the API keeps serving; `lifecycle.workers` (shown by /ready) says
 * where it is. `firstStart` settles with whether the first child got ready. One whose parent has gone shuts down
 * by itself.
 */
export function startWorkerProcess({ config, logger, metrics, lifecycle, load }: Services): RunningWorkers & { firstStart: Promise<boolean> } {
  let closing = false;
  let restart: NodeJS.Timeout | undefined;
  let delay = RESTART_DELAY_MS.first;
  const answers = new Map<number, (series: ProcessSeries) => void>();
  let asked = 0;
  let settleFirstStart: (ready: boolean) => void = () => {};
  const firstStart = new Promise<boolean>((resolve) => (settleFirstStart = resolve));

  const forkWorkers = () => {
    // Its own process group: a Ctrl-C in the terminal reaches only `npm start`, which then stops it in order.
    const child = fork(ENTRY, { detached: true });
    // Below the API in the kernel's eyes (WORKER_NICE): a request is answered before a job moves on.
    if (child.pid !== undefined && config.WORKER_NICE > 0) {
      try {
        setPriority(child.pid, config.WORKER_NICE);
      } catch (err) {
        logger.warn({ err }, 'could not lower the worker process\'s priority (WORKER_NICE)');
      }
    }
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
  const startLater = () => {
    lifecycle.workers = 'down';
    restart = setTimeout(start, delay);
    delay = Math.min(delay * 2, RESTART_DELAY_MS.max);
  };
  const start = () => {
    const child = (current = forkWorkers());
    lifecycle.workers = 'starting';
    readiness(child).then(
      () => {
        lifecycle.workers = 'up';
        const upSince = Date.now();
        settleFirstStart(true);
        child.once('exit', (code, signal) => {
          if (closing) return;
          // One that dies each time right after it got ready (a bad job, a dependency that fails under load) is
          // started again ever more slowly, as one that cannot start is.
          if (Date.now() - upSince >= RESTART_DELAY_MS.stable) delay = RESTART_DELAY_MS.first;
          logger.error({ code, signal }, `the worker process ended; starting another in ${delay} ms`);
          startLater();
        });
      },
      (err: Error) => {
        // Stopped while still starting: the shutdown under way ends the process.
        if (closing) return;
        settleFirstStart(false);
        logger.error({ err }, `the worker process did not start; trying again in ${delay} ms`);
        startLater();
      },
    );
  };

  let current: ChildProcess;
  start();

  metrics.addPeer(
    () =>
      new Promise((resolve) => {
        if (!current.connected) return resolve([]);
        const id = ++asked;
        answers.set(id, resolve);
        current.send({ type: 'series', id } satisfies ToWorkerProcess, ignoreSendError);
        // A worker process still starting does not listen yet: its series are left out of this scrape.
        setTimeout(() => {
          answers.get(id)?.([]);
          answers.delete(id);
        }, PEER_ANSWER_MS).unref();
      }),
  );

  // Placement first: the worker process yields while this one is busy (src/modules/fulfilment/pace.ts).
  const tellLoad = config.PLACEMENT_FIRST
    ? setInterval(() => {
        const inFlight = load.take();
        if (current.connected) current.send({ type: 'load', inFlight } satisfies ToWorkerProcess, ignoreSendError);
      }, LOAD_INTERVAL_MS).unref()
    : undefined;

  return {
    firstStart,
    close: async (deadline = Date.now() + 10_000) => {
      closing = true;
      clearTimeout(restart);
      clearInterval(tellLoad);
      if (current.exitCode !== null || current.signalCode !== null) return;
      lifecycle.workers = 'down';
      const exited = once(current, 'exit');
      current.kill('SIGTERM');
      await until(deadline, exited);
      // Past the deadline: the jobs it still held run again once their locks expire.
      if (current.exitCode === null && current.signalCode === null) current.kill('SIGKILL');
    },
  };
}

/**
 * A message to a worker process that has just ended fails (EPIPE) before its exit is seen: the exit handler restarts
 * it, so the failed send needs no more (without a callback it would be an uncaught error in the API process).
 */
const ignoreSendError = () => {};

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
