/**
 * Debian's HAProxy on spare ports, as a load balancer over API processes (health-checked on /ready) and as the
 * stable address of the PostgreSQL primary (TCP), repointed through its runtime API at a failover.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort, type HostPort } from './system.js';

export type HaProxy = {
  /** The API's address behind the balancer, e.g. `http://127.0.0.1:43123`. */
  apiUrl: string;
  /** The address that leads to the PostgreSQL primary. */
  postgres: HostPort;
  /** Sends new PostgreSQL connections to `server` (and ends the sessions to the old one). */
  repointPostgres: (server: HostPort) => Promise<void>;
  /** What HAProxy logged: a line per request (`option httplog`) and its warnings. */
  log: () => string;
  /** The balancer's view of each API server: `UP`, `DOWN`, … */
  apiStates: () => Promise<Record<string, string>>;
  stop: () => Promise<void>;
};

/**
 * `checkIntervalMs`: how often each API server's /ready is asked; two failed checks take it out of rotation, two
 * good ones bring it back. A request whose connection is refused is sent to another server (`redispatch`).
 */
export async function startHaProxy({ apis, postgres, checkIntervalMs = 500 }: { apis: HostPort[]; postgres: HostPort; checkIntervalMs?: number }): Promise<HaProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const [apiPort, postgresPort] = [await freePort(), await freePort()];
  const config = join(dir, 'haproxy.cfg');
  await writeFile(
    config,
    [
      'global',
      `  stats socket ${socket} mode 600 level admin`,
      '  maxconn 4096',
      '  log stdout format raw local0 info',
      'defaults',
      '  timeout connect 2s',
      '  timeout client 60s',
      '  timeout server 60s',
      // /ready answers within 2 s by itself (a slow dependency is reported, not waited for).
      '  timeout check 2s',
      '  retries 3',
      '  option redispatch',
      'frontend api',
      '  mode http',
      '  log global',
      '  option httplog',
      `  bind 127.0.0.1:${apiPort}`,
      '  option forwardfor',
      '  default_backend api',
      'backend api',
      '  mode http',
      '  balance roundrobin',
      '  option httpchk GET /ready',
      '  http-check expect status 200',
      `  default-server inter ${checkIntervalMs} fall 2 rise 2`,
      ...apis.map((api, i) => `  server api${i + 1} ${api.host}:${api.port} check`),
      'listen postgres',
      '  mode tcp',
      `  bind 127.0.0.1:${postgresPort}`,
      '  timeout client 1h',
      '  timeout server 1h',
      `  server primary ${postgres.host}:${postgres.port}`,
      '',
    ].join('\n'),
  );
  const child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(apiPort).catch((err: Error) => {
    throw new Error(`${err.message}\n${output}`);
  });
  const ask = (command: string) =>
    new Promise<string>((resolve, reject) => {
      const client = connect(socket);
      let answer = '';
      client.on('data', (chunk) => (answer += chunk));
      client.once('error', reject);
      client.once('end', () => resolve(answer));
      client.end(`${command}\n`);
    });
  return {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    postgres: { host: '127.0.0.1', port: postgresPort },
    repointPostgres: async (server) => {
      const answer = await ask(`set server postgres/primary addr ${server.host} port ${server.port}`);
      if (!/changed/i.test(answer)) throw new Error(`haproxy refused to repoint postgres: ${answer}`);
      await ask('shutdown sessions server postgres/primary');
    },
    log: () => output,
    apiStates: async () => {
      const csv = await ask('show stat');
      const header = csv.split('\n')[0]!.replace(/^# /, '').split(',');
      const [proxy, server, status] = ['pxname', 'svname', 'status'].map((name) => header.indexOf(name));
      return Object.fromEntries(
        csv
          .split('\n')
          .slice(1)
          .map((line) => line.split(','))
          .filter((row) => row[proxy!] === 'api' && row[server!]?.startsWith('api'))
          .map((row) => [row[server!]!, row[status!]!]),
      );
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
