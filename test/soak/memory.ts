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

/** Kept-heap figures a process needs in the window to be judged: fewer say nothing about growth. */
const MIN_HEAP_SAMPLES = 6;

/**
 * Samples every `intervalMs` the memory of the processes `roles` names now (a role's process changes when it is
 * killed and another started): resident memory, and the heap it keeps (after its latest major collection). `stop`
 * ends it and gives, for every process that lived long enough in the last two thirds of the run (the window) to have
 * MIN_HEAP_SAMPLES kept-heap figures there, its growth over its time in the window: resident memory as its last three
 * samples against its first three, and the kept heap as the median of its last third of figures against the median of
 * its first third (a major collection comes every few seconds to minutes: the median of a third looks past one that
 * came late). A process started late in the window (one killed and started again) is left out; a role with no process
 * judged says so (`judged: false`), unless its process had ended before the window.
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
      const heaps = (part: Sample[]) => part.map((s) => s.heap).filter((h): h is number => h !== null);
      return [...series.entries()].flatMap(([role, samples]) => {
        const pids = [...new Set(samples.map((s) => s.pid))];
        const judged = pids
          .map((pid) => ({ pid, window: samples.filter((s) => s.pid === pid && s.atSeconds >= windowFrom) }))
          .filter(({ window }) => heaps(window).length >= MIN_HEAP_SAMPLES)
          .map(({ pid, window }, i, all) => {
            const kept = heaps(window);
            const third = Math.max(1, Math.floor(kept.length / 3));
            const heapFirst = median(kept.slice(0, third));
            const heapLast = median(kept.slice(-third));
            const rssFirst = median(window.slice(0, 3).map((s) => s.rss));
            const rssLast = median(window.slice(-3).map((s) => s.rss));
            const restarted = pid !== samples.at(-1)!.pid;
            return {
              role: all.length > 1 || restarted ? `${role} (pid ${pid}${restarted ? ', until killed' : ''})` : role,
              judged: true,
              samples: samples.filter((s) => s.pid === pid).length,
              windowSamples: window.length,
              rss: { first: rssFirst, last: rssLast, peak: Math.max(...window.map((s) => s.rss)), growth: growthOf(rssFirst, rssLast) },
              heap: { first: heapFirst, last: heapLast, growth: growthOf(heapFirst, heapLast) },
            };
          });
        // A process that had ended before the window (killed early) has nothing to say about it.
        if (judged.length > 0 || !samples.some((s) => s.atSeconds >= windowFrom)) return judged;
        const none = { first: Number.NaN, last: Number.NaN, peak: Number.NaN, growth: Number.NaN };
        return [{ role, judged: false, samples: samples.length, windowSamples: 0, rss: none, heap: none }];
      });
    },
  };
}
