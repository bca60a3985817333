import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { Sql } from '../../src/db/client.js';

/**
 * What a scenario leaned on, for the notes beside each figure: CPU of the measured processes
 * (100% = one core), the whole machine's busy share, and PostgreSQL transactions per request
 * (every statement outside an explicit transaction counts as one).
 */

const TICKS_PER_SECOND = 100; // Linux USER_HZ

function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

function hostTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = values.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3]! - n[4]!, total }; // minus idle and iowait
}

/** PostgreSQL backends serving the bench database (the service's pool, workers, the bench itself). */
async function backendPids(sql: Sql): Promise<number[]> {
  const rows = await sql`select pid from pg_stat_activity where datname = current_database()`;
  return rows.map((r) => Number(r.pid));
}

async function commits(sql: Sql): Promise<number> {
  const [row] = await sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`;
  return Number(row!.n);
}

export type Probe = { stop: (requests?: number) => Promise<string> };

/** The processes measured under each name: one, several (counted together), or none (not running). */
export type Pids = Record<string, number | number[] | undefined>;

const ticksOf = (pid: number | number[]) => [pid].flat().reduce((sum, one) => sum + processTicks(one), 0);

export async function startProbe(pids: Pids, sql?: Sql): Promise<Probe> {
  const started = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? ticksOf(pid) : 0]));
  const host = hostTicks();
  const xacts = sql ? await commits(sql) : 0;
  const walBefore = sql ? (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn : null;
  const backends = sql ? await backendPids(sql) : [];
  const backendTicks = () => backends.reduce((sum, pid) => sum + processTicks(pid), 0);
  const backendsBefore = backendTicks();
  return {
    stop: async (requests) => {
      const seconds = (performance.now() - started) / 1000;
      // CPU seconds of each process over the run; per request too when the requests are counted (the capacity model).
      const cpu = Object.entries(pids)
        .filter(([, pid]) => pid)
        .map(([name, pid]) => [name, (ticksOf(pid!) - before[name]!) / TICKS_PER_SECOND] as const);
      if (backends.length) cpu.push(['postgres backends', (backendTicks() - backendsBefore) / TICKS_PER_SECOND]);
      const parts = cpu.map(([name, used]) => `${name} cpu ${Math.round((used / seconds) * 100)}%`);
      const perRequest = requests ? cpu.map(([name, used]) => `${name} ${((used / requests) * 1000).toFixed(2)} ms`) : [];
      if (sql && requests && walBefore) {
        const [wal] = await sql<{ bytes: string }[]>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${walBefore}::pg_lsn)::text as bytes`;
        perRequest.push(`WAL ${(Number(wal!.bytes) / requests / 1024).toFixed(2)} KiB`);
      }
      const now = hostTicks();
      parts.push(`host busy ${Math.round(((now.busy - host.busy) / Math.max(1, now.total - host.total)) * 100)}% of ${cpus().length} cores`);
      parts.push(`load ${loadavg()[0]!.toFixed(1)}`);
      if (sql && requests) {
        // Backends publish their counters about once a second.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        parts.push(`db xact/req ${(((await commits(sql)) - xacts) / requests).toFixed(1)}`);
      }
      if (perRequest.length) parts.push(`per request: ${perRequest.join(', ')}`);
      return parts.join(', ');
    },
  };
}
