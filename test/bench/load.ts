import autocannon from 'autocannon';

/** What one measurement yields before it is named and compared with its ceiling. */
export type Figures = { rps: number; p50_ms: number; p99_ms: number; errors: number };

/** Figures plus a free-text note on what the run leaned on (not part of the JSON results). */
export type Measured = Figures & { note?: string };

export const CONNECTIONS = 64;

export type HttpLoad = {
  url: string;
  seconds: number;
  /** Builds every request (method, path, headers, body), so each one can use another account or product. */
  next: () => autocannon.Request;
  connections?: number;
  /** Stop after this many requests instead of after `seconds`. */
  amount?: number;
};

/**
 * HTTP load with autocannon. rps counts 2xx answers only, so fast failures never inflate it;
 * errors = non-2xx answers + connection errors and timeouts.
 */
export async function runHttp(load: HttpLoad): Promise<Figures & { total: number }> {
  const result = await autocannon({
    url: load.url,
    connections: load.connections ?? CONNECTIONS,
    duration: load.seconds,
    amount: load.amount,
    timeout: 20,
    requests: [{ setupRequest: (req) => ({ ...req, ...load.next() }) }],
  });
  return {
    rps: result['2xx'] / result.duration,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.non2xx + result.errors,
    total: result.requests.total,
  };
}

/** Percentile of an unsorted sample (nearest rank). */
export function percentile(sample: number[], p: number): number {
  if (sample.length === 0) return 0;
  const sorted = Float64Array.from(sample).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * A closed loop of `workers` concurrent callers running `task` until `limit.seconds` pass or
 * `limit.calls` calls have started; for the non-HTTP ceilings (SQL transactions, queue adds).
 */
export async function closedLoop(
  workers: number,
  limit: { seconds: number } | { calls: number },
  task: (worker: number, call: number) => Promise<void>,
): Promise<{ latencies: number[]; failures: number; elapsedMs: number; firstError?: unknown }> {
  const latencies: number[] = [];
  let failures = 0;
  let firstError: unknown;
  let call = 0;
  const started = performance.now();
  const more =
    'seconds' in limit ? () => performance.now() < started + limit.seconds * 1000 : () => call < limit.calls;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (more()) {
        const t = performance.now();
        try {
          await task(worker, call++);
          latencies.push(performance.now() - t);
        } catch (err) {
          failures++;
          firstError ??= err;
        }
      }
    }),
  );
  return { latencies, failures, elapsedMs: performance.now() - started, firstError };
}
