/**
 * A PostgreSQL primary with a synchronous streaming standby, built from the installed PostgreSQL 15 binaries
 * (initdb, pg_basebackup) on spare ports and a directory of the test's own, run as the `postgres` user.
 */
import { join } from 'node:path';
import { appendFile } from 'node:fs/promises';
import postgres from 'postgres';
import { freePort, postgresUserDir, runAsPostgres, until } from './system.js';

const BIN = '/usr/lib/postgresql/15/bin';

export type PostgresPair = {
  primaryPort: number;
  standbyPort: number;
  /** Stops the primary like a crash (`pg_ctl stop -m immediate`): no shutdown checkpoint, connections cut. */
  crashPrimary: () => Promise<void>;
  /** Promotes the standby to a primary that takes writes. */
  promoteStandby: () => Promise<void>;
  /** The servers' logs, for a failing test's message. */
  logs: () => Promise<string>;
  stop: () => Promise<void>;
};

/** Waits until `check` holds on the server at `port` (a fresh connection each time). */
async function untilServer(port: number, what: string, check: (sql: postgres.Sql) => Promise<boolean>, timeoutMs = 30_000) {
  await until(
    `${what} on port ${port}`,
    async () => {
      const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1, connect_timeout: 2, onnotice: () => {} });
      try {
        return await check(sql);
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
    timeoutMs,
  );
}

/**
 * `synchronous`: the primary waits for the standby to have flushed a commit's WAL before it answers the commit
 * (synchronous_standby_names), so no commit a client saw is missing after a promotion.
 */
export async function startPostgresPair({ synchronous = true } = {}): Promise<PostgresPair> {
  const dir = await postgresUserDir('topup-pg-pair-');
  const primary = join(dir.path, 'primary');
  const standby = join(dir.path, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  await runAsPostgres(`${BIN}/initdb`, ['-D', primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  await appendFile(
    join(primary, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir.path}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'max_connections = 200',
      // The standby connects as `standby` (its cluster_name).
      `synchronous_standby_names = '${synchronous ? 'standby' : ''}'`,
      'synchronous_commit = on',
      '',
    ].join('\n'),
  );
  const start = (data: string, port: number, extra = '') =>
    runAsPostgres(`${BIN}/pg_ctl`, ['-D', data, '-l', join(dir.path, `${port}.log`), '-w', '-t', '60', '-o', `-p ${port} ${extra}`.trim(), 'start']);
  await start(primary, primaryPort);
  await runAsPostgres(`${BIN}/pg_basebackup`, ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standby, '-R', '--wal-method=stream', '--checkpoint=fast']);
  // The standby names itself for the primary's synchronous_standby_names; promoted, it waits for no standby of its own.
  await start(standby, standbyPort, "-c cluster_name=standby -c synchronous_standby_names=''");
  if (synchronous) {
    await untilServer(primaryPort, 'the standby to be synchronous', async (sql) => {
      const rows = await sql`select sync_state from pg_stat_replication where application_name = 'standby'`;
      return rows[0]?.sync_state === 'sync';
    });
  }
  const pgCtl = (data: string, ...args: string[]) => runAsPostgres(`${BIN}/pg_ctl`, ['-D', data, ...args]);
  return {
    primaryPort,
    standbyPort,
    crashPrimary: () => pgCtl(primary, '-m', 'immediate', 'stop').then(() => undefined),
    promoteStandby: async () => {
      await pgCtl(standby, '-w', 'promote');
      await untilServer(standbyPort, 'the promoted standby to take writes', async (sql) => {
        const [row] = await sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`;
        return row?.recovering === false;
      });
    },
    logs: async () => `${await dir.read(`${primaryPort}.log`).catch(() => '')}\n${await dir.read(`${standbyPort}.log`).catch(() => '')}`,
    stop: async () => {
      for (const data of [standby, primary]) await pgCtl(data, '-m', 'immediate', 'stop').catch(() => {});
      await dir.remove();
    },
  };
}
