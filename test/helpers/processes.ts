import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Repository root: children run from here so `--import tsx` and relative paths resolve. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type Child = {
  process: ChildProcess;
  /** Throws when the process ended without stop() being called (crash, or a signal from outside). */
  ensureRunning: () => void;
  /** What it said last on stderr, where that is kept (runEntry); empty otherwise. */
  lastWords: () => string;
  stop: () => Promise<void>;
};

/** Where spare ports are drawn from unless a caller names its own range: below the cluster nodes' (see redis-topologies). */
const SPARE_PORTS = { from: 10_000, to: 20_000 };

/** How many slices a range is cut into: one per test file running at once (vitest's pool slot), at most this many. */
const POOL_SLICES = 8;

/** Ports this test process has handed out, so two servers of one test never draw the same one. */
const handedOut = new Set<number>();

/**
 * A free TCP port on the loopback interface, drawn at random below the kernel's ephemeral range (32768 and up).
 * A port from that range, free when checked, can be taken by any outgoing connection (a parallel test's client)
 * before the server meant to have it listens; below it, only a listener can. Each test file running at once draws from
 * a slice of the range of its own (by VITEST_POOL_ID), so two files never draw the same port either, however long a
 * server takes to start. `alsoFree` names ports the server will open beside it (a Redis Cluster node's bus), which
 * must be free too.
 */
export async function freePort(range = SPARE_PORTS, alsoFree: (port: number) => number[] = () => []): Promise<number> {
  const { from, to } = sliceOf(range);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from));
    const ports = [port, ...alsoFree(port)];
    if (ports.some((each) => handedOut.has(each))) continue;
    if (!(await Promise.all(ports.map(portFree))).every(Boolean)) continue;
    for (const each of ports) handedOut.add(each);
    return port;
  }
  throw new Error(`no free port left between ${from} and ${to}`);
}

/** This process's slice of `range`: all of it outside vitest (the bench). */
function sliceOf({ from, to }: { from: number; to: number }) {
  const slot = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(slot) || slot < 1) return { from, to };
  const width = Math.floor((to - from) / POOL_SLICES);
  const start = from + ((slot - 1) % POOL_SLICES) * width;
  return { from: start, to: start + width };
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

export type SpawnOptions = {
  /** Node flags before the file (`--cpu-prof`, which NODE_OPTIONS does not take). */
  nodeFlags?: string[];
  /** Which lines of its stderr to show (all when unset). */
  showLine?: (line: string) => boolean;
};

/**
 * Runs a TypeScript entry point in its own Node process (as `npm start` / `npm run worker` do),
 * so the load generator never shares an event loop with the server it measures.
 */
export function spawnTs(file: string, env: Record<string, string>, { nodeFlags = [], showLine }: SpawnOptions = {}): Child {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // stdout carries only the start banner; logs (stderr) stay visible.
    stdio: ['ignore', 'ignore', showLine ? 'pipe' : 'inherit'],
  });
  if (showLine) {
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (showLine(line)) process.stderr.write(`${line}\n`);
    });
  }
  return supervise(child, file);
}

/**
 * Follows a child process: `ensureRunning` throws once it ended unasked (with `lastWords()`, what it said last,
 * in the message), `stop` sends SIGTERM and waits.
 */
export function supervise(child: ChildProcess, file: string, lastWords: () => string = () => ''): Child {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping = false;
  return {
    process: child,
    lastWords,
    ensureRunning: () => {
      if (!stopping && (child.exitCode !== null || child.signalCode !== null)) {
        throw new Error(`${file} ended unexpectedly (exit code ${child.exitCode}, signal ${child.signalCode})\n${lastWords()}`);
      }
    },
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Whether `text`, read from a raw connection, holds a whole HTTP answer: its head and Content-Length bytes of body. */
export function httpAnswerComplete(text: string): boolean {
  const split = text.indexOf('\r\n\r\n');
  const length = /content-length: (\d+)/i.exec(text)?.[1];
  return split !== -1 && length !== undefined && text.length - split - 4 >= Number(length);
}

/**
 * Waits until `url` answers 200, failing early when the child dies. A child that lives but never answers fails with
 * the last answer (or connection error) seen and what the child said last.
 */
export async function waitForHttp(url: string, child: Child, timeoutMs = 60_000, init: RequestInit = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no attempt';
  while (Date.now() < deadline) {
    child.ensureRunning();
    const ok = await fetch(url, init).then(
      (r) => ((last = `status ${r.status}`), r.ok),
      (err: Error & { cause?: { code?: string } }) => ((last = err.cause?.code ?? err.message), false),
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (last: ${last})\n${child.lastWords()}`);
}

/** The METRICS_TOKEN of every service a test starts (C16). */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';

/** GET `${baseUrl}/metrics` with the test token; fails unless it answers 200. */
export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`);
  return text;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The worker processes `npm start` (process `pid`) has forked, by their command: the TypeScript loader may have a
 * compiler child of its own beside them.
 */
export function workerProcessesOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => /workers\/main\.(ts|js)/.test(line))
      .map((line) => Number.parseInt(line, 10));
  } catch {
    return []; // ps exits 1 when there are none
  }
}

export type Run = Child & {
  /** Everything the process wrote so far. */
  stdout: () => string;
  stderr: () => string;
  /** Settles when the process has ended. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** Runs a TypeScript entry point (or, with `compiled`, a JavaScript one) with its output captured. */
export function runEntry(
  file: string,
  env: Record<string, string>,
  { compiled = false, args = [] as string[], stdin = undefined as string | undefined } = {},
): Run {
  const child = spawn(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), file, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { ...supervise(child, file, () => stderr.slice(-4000)), stdout: () => stdout, stderr: () => stderr, exit };
}

/**
 * `npm run worker` in its own process, resolved once it is ready: a worker process serves its metrics (on a spare
 * port) once its start, database and Redis checks, is behind it.
 */
export async function runWorkerProcess(env: Record<string, string>): Promise<Run & { metricsUrl: string }> {
  const metricsPort = await freePort();
  const worker = runEntry('workers/main.ts', { METRICS_TOKEN: TEST_METRICS_TOKEN, ...env, WORKER_METRICS_PORT: String(metricsPort) });
  const token = { Authorization: `Bearer ${env.METRICS_TOKEN ?? TEST_METRICS_TOKEN}` };
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  // A worker that never comes up is stopped, not left running behind the failure.
  await waitForHttp(`${metricsUrl}/metrics`, worker, undefined, { headers: token }).catch(async (err: unknown) => {
    await worker.stop();
    throw err;
  });
  return { ...worker, metricsUrl };
}
