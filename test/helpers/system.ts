/** What the tests that build real infrastructure share: spare ports, directories, commands run as `postgres`. */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, sleep } from './processes.js';

export { freePort, sleep };

export type HostPort = { host: string; port: number };

const run = promisify(execFile);

/** Runs a command to its end; a failure carries what it printed. */
export async function command(file: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  try {
    const { stdout } = await run(file, args, { env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${(err as Error).message}\n${stdout}${stderr}`);
  }
}

/** PostgreSQL's and PgBouncer's programs refuse to run as root: they run as the `postgres` user. */
export const runAsPostgres = (file: string, args: string[]) => command('runuser', ['-u', 'postgres', '--', file, ...args]);

const postgresIds = async () => ({
  uid: Number((await command('id', ['-u', 'postgres'])).trim()),
  gid: Number((await command('id', ['-g', 'postgres'])).trim()),
});

export type OwnedDir = {
  path: string;
  /** Hands a file written by the test to the `postgres` user. */
  chown: (file: string) => Promise<void>;
  read: (name: string) => Promise<string>;
  remove: () => Promise<void>;
};

/** A fresh directory owned by the `postgres` user. */
export async function postgresUserDir(prefix: string): Promise<OwnedDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const { uid, gid } = await postgresIds();
  await chown(path, uid, gid);
  return {
    path,
    chown: (file) => chown(file, uid, gid),
    read: (name) => readFile(join(path, name), 'utf8'),
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

/** Whether the process `pid` still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the process `pid` has gone. */
export async function gone(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
}

/** Polls `probe` until it returns something truthy; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** `waitFor` for a check that rejects while what it waits for is not there yet: a rejection counts as not yet. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  await waitFor(what, () => check().catch(() => false), timeoutMs);
}
