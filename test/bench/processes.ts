import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Repository root: children run from here so `--import tsx` and relative paths resolve. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type Child = {
  process: ChildProcess;
  /** Throws when the process ended without stop() being called (crash, or a signal from outside). */
  ensureRunning: () => void;
  stop: () => Promise<void>;
};

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Runs a TypeScript entry point in its own Node process (as `npm start` / `npm run worker` do),
 * so the load generator never shares an event loop with the server it measures.
 */
export function spawnTs(file: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // stdout carries only the start banner; logs (stderr, errors only) stay visible.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping = false;
  return {
    process: child,
    ensureRunning: () => {
      if (!stopping && (child.exitCode !== null || child.signalCode !== null)) {
        throw new Error(`${file} ended unexpectedly (exit code ${child.exitCode}, signal ${child.signalCode})`);
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

/** Waits until `url` answers 200, failing early when the child dies. */
export async function waitForHttp(url: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    child.ensureRunning();
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
