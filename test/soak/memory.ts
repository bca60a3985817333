import { readFileSync } from 'node:fs';
import { TEST_METRICS_TOKEN } from '../helpers/processes.js';

/** A process to sample: its pid, and where its /metrics answers (for the V8 heap in use). */
export type Sampled = { pid: number | undefined; metricsUrl: string } | undefined;

/** A process's resident memory in MiB (VmRSS), or null once it has gone. */
function residentMiB(pid: number): number | null {
  try {
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

/**
 * The V8 heap the process keeps (MiB): in use right after its latest major collection, as its own /metrics says
 * (`nodejs_heap_used_after_major_gc_bytes`); null before its first major collection (the gauge reads 0 until then).
 */
async function heapKeptMiB(metricsUrl: string): Promise<number | null> {
  const text = await fetch(`${metricsUrl}/metrics`, { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` }, signal: AbortSignal.timeout(5000) })
    .then((r) => r.text())
    .catch(() => '');
  const bytes = /^nodejs_heap_used_after_major_gc_bytes (\d+(?:\.\d+)?)/m.exec(text)?.[1];
  // 0: no major collection yet (a process just started).
  return bytes === undefined || Number(bytes) === 0 ? null : Number(bytes) / 1024 / 1024;
}

type Sample = { atSeconds: number; pid: number; rss: number; heap: number | null };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const growthOf = (first: number, last: number) => (first > 0 ? last / first - 1 : 0);

/**
 * Samples every `intervalMs` the memory of the processes `roles` names now (a role's process changes when it is
 * killed and another started): resident memory, and the heap it keeps (after its latest major collection). `stop`
 * ends it and gives, for each role, the growth over the last two thirds of the run of the process alive at the end
 * (one started within the window counts from its own start): resident memory as the last three samples against the
 * first three, and the kept heap as the median of the window's last third against the median of its first third (a
 * major collection comes every few seconds to minutes: the median of a third looks past one that came late).
 */
export function memorySampler(roles: () => Record<string, Sampled>, intervalMs: number) {
  const started = Date.now();
  const series = new Map<string, Sample[]>();
  const sample = async () => {
    await Promise.all(
      Object.entries(roles()).map(async ([role, target]) => {
        const pid = target?.pid;
        const rss = pid === undefined ? null : residentMiB(pid);
        if (pid === undefined || rss === null) return;
        const heap = await heapKeptMiB(target!.metricsUrl);
        const samples = series.get(role) ?? [];
        samples.push({ atSeconds: Math.round((Date.now() - started) / 1000), pid, rss, heap });
        series.set(role, samples);
      }),
    );
  };
  void sample();
  const timer = setInterval(() => void sample(), intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await sample();
      const windowFrom = (Date.now() - started) / 1000 / 3;
      return [...series.entries()].map(([role, samples]) => {
        const last = samples.at(-1)!;
        const window = samples.filter((s) => s.pid === last.pid && s.atSeconds >= windowFrom);
        const third = Math.max(1, Math.floor(window.length / 3));
        const heaps = (part: Sample[]) => part.map((s) => s.heap).filter((h): h is number => h !== null);
        const heapFirst = median(heaps(window.slice(0, third)));
        const heapLast = median(heaps(window.slice(-third)));
        const rssFirst = median(window.slice(0, 3).map((s) => s.rss));
        const rssLast = median(window.slice(-3).map((s) => s.rss));
        return {
          role,
          samples: samples.length,
          windowSamples: window.length,
          rss: { first: rssFirst, last: rssLast, peak: Math.max(...samples.map((s) => s.rss)), growth: growthOf(rssFirst, rssLast) },
          heap: { first: heapFirst, last: heapLast, growth: heapFirst > 0 && heapLast > 0 ? growthOf(heapFirst, heapLast) : Number.NaN },
        };
      });
    },
  };
}
