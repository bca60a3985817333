import { readFileSync } from 'node:fs';

type Sampled = { process: { pid?: number | undefined } } | undefined;

/** A process's resident memory in MiB (VmRSS), or null once it has gone. */
function residentMiB(pid: number): number | null {
  try {
    const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

export type MemorySeries = { role: string; samples: Array<{ atSeconds: number; pid: number; mib: number }> };

/**
 * Samples every `intervalMs` the resident memory of the processes `roles` names now (a role's process changes when it
 * is killed and another started). `stop` ends it and gives each role's samples and its growth over the last two thirds
 * of the run: the last three samples against the first three of that window, of the process alive at the end (a
 * process started within the window is measured from its own start).
 */
export function memorySampler(roles: () => Record<string, Sampled>, intervalMs: number) {
  const started = Date.now();
  const series = new Map<string, MemorySeries>();
  const sample = () => {
    for (const [role, run] of Object.entries(roles())) {
      const pid = run?.process.pid;
      const mib = pid === undefined ? null : residentMiB(pid);
      if (pid === undefined || mib === null) continue;
      const entry = series.get(role) ?? { role, samples: [] };
      entry.samples.push({ atSeconds: Math.round((Date.now() - started) / 1000), pid, mib });
      series.set(role, entry);
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      const windowFrom = ((Date.now() - started) / 1000) / 3;
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      return [...series.values()].map(({ role, samples }) => {
        const last = samples.at(-1)!;
        const window = samples.filter((s) => s.pid === last.pid && s.atSeconds >= windowFrom);
        const first = median(window.slice(0, 3).map((s) => s.mib));
        const end = median(window.slice(-3).map((s) => s.mib));
        return {
          role,
          samples,
          windowSamples: window.length,
          startMiB: first,
          endMiB: end,
          peakMiB: Math.max(...samples.map((s) => s.mib)),
          growth: first > 0 ? end / first - 1 : 0,
        };
      });
    },
  };
}
