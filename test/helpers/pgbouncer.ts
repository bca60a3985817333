import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { alive, freePort, gone, postgresUserDir, runAsPostgres, waitForPort, type HostPort } from './system.js';

export type PgBouncer = {
  port: number;
  /** `url` with its host and port replaced by PgBouncer's (the database name and user stay). */
  through: (url: string) => string;
  /** Sends new server connections to `backend` (a failover): the configuration is rewritten and reloaded. */
  repoint: (backend: HostPort) => Promise<void>;
  /** PgBouncer's own log, for a failing test's message. */
  log: () => Promise<string>;
  stop: () => Promise<void>;
};

/**
 * Debian's PgBouncer on a spare port in front of `backend`, in transaction mode (a server connection per
 * transaction, as most deployments run it), with trust authentication. It refuses to run as root, so it runs
 * as the `postgres` user from a directory of its own.
 */
export async function startPgBouncer(backend: HostPort, { poolSize = 20, maxClients = 1000 } = {}): Promise<PgBouncer> {
  const dir = await postgresUserDir('topup-pgbouncer-');
  const port = await freePort();
  const ini = join(dir.path, 'pgbouncer.ini');
  const pidFile = join(dir.path, 'pgbouncer.pid');
  const logFile = join(dir.path, 'pgbouncer.log');
  const write = async ({ host, port: backendPort }: HostPort) => {
    await writeFile(
      ini,
      [
        '[databases]',
        `* = host=${host} port=${backendPort}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        `unix_socket_dir = ${dir.path}`,
        'auth_type = trust',
        `auth_file = ${join(dir.path, 'users.txt')}`,
        'pool_mode = transaction',
        `default_pool_size = ${poolSize}`,
        `max_client_conn = ${maxClients}`,
        'server_connect_timeout = 3',
        'server_login_retry = 1',
        `logfile = ${logFile}`,
        `pidfile = ${pidFile}`,
        '',
      ].join('\n'),
    );
    await dir.chown(ini);
  };
  await writeFile(join(dir.path, 'users.txt'), '"postgres" ""\n');
  await dir.chown(join(dir.path, 'users.txt'));
  await write(backend);
  await runAsPostgres('pgbouncer', ['-d', ini]);
  await waitForPort(port);
  const pid = async () => Number((await dir.read('pgbouncer.pid')).trim());
  return {
    port,
    through: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    repoint: async (next) => {
      await write(next);
      process.kill(await pid(), 'SIGHUP');
    },
    log: () => dir.read('pgbouncer.log'),
    stop: async () => {
      const running = await pid().catch(() => 0);
      if (running && alive(running)) {
        process.kill(running, 'SIGINT');
        await gone(running);
      }
      await dir.remove();
    },
  };
}
