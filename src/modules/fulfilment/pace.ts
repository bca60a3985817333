import type { BatchOptions } from '../../lib/batch.js';
import { FULFILMENT_BATCH } from './jobs.js';

/**
 * Placement first, on a box the API shares with this worker: while the API process answers at least
 * `busyFrom` requests at once on average, card fulfilment runs one batch transaction at a time, of up to `maxSize`
 * orders, and a batch short of that waits up to `lingerMs` for more. Orders placed then cost fulfilment a fraction of
 * the commits and of the worker's and PostgreSQL's CPU per order (in the bench, a batch of two or three orders cost
 * two to three times as much per order as one of 32), and one fulfilment transaction at most competes with the
 * placements. A backlog still drains: its batches fill at once, and a full batch never waits. Below `calmBelow` the
 * worker is back to its usual pace (FULFILMENT_BATCH: several batches at once, none waiting). The API's figure comes
 * every LOAD_INTERVAL_MS, smoothed.
 */
export const PLACEMENT_FIRST = { busyFrom: 4, calmBelow: 2, lingerMs: 50, inFlight: 1, maxSize: 128 };

/**
 * Fulfilment jobs a worker process runs at once: enough for full batches at each pace it may take (`paced`: it may
 * yield), those running and the next gathering. A job waiting for its batch holds no database connection (a batch
 * holds one).
 */
export function fulfilmentJobs(paced: boolean): number {
  return Math.max(...(paced ? [FULFILMENT_BATCH, PLACEMENT_FIRST] : [FULFILMENT_BATCH]).map((pace) => pace.maxSize * (pace.inFlight + 1)));
}

/** How often the API process tells its worker process how busy it is (workers/process.ts). */
export const LOAD_INTERVAL_MS = 250;

export type FulfilmentPace = {
  /** The batch options `batchedFulfilment` reads at each batch start; `observe` changes them. */
  batch: BatchOptions;
  /** The API process's average number of requests in flight over the last interval. */
  observe: (apiInFlight: number) => void;
  yielding: () => boolean;
};

/** A pace that starts at the usual one; `onChange` is told each time fulfilment starts or stops yielding. */
export function fulfilmentPace(onChange: (yielding: boolean) => void = () => {}, settings = PLACEMENT_FIRST): FulfilmentPace {
  const usual = { maxSize: FULFILMENT_BATCH.maxSize, inFlight: FULFILMENT_BATCH.inFlight, lingerMs: FULFILMENT_BATCH.lingerMs ?? 0 };
  const yielded = { maxSize: settings.maxSize, inFlight: settings.inFlight, lingerMs: settings.lingerMs };
  const batch: BatchOptions = { ...usual };
  let smoothed = 0;
  let yielding = false;
  const set = (to: boolean) => {
    if (to === yielding) return;
    yielding = to;
    Object.assign(batch, to ? yielded : usual);
    onChange(to);
  };
  return {
    batch,
    observe: (apiInFlight) => {
      // Half the weight to the newest figure, itself capped: one busy interval (or one long request, counted whole
      // when it ends) never flips the pace on its own; two in a row do.
      smoothed = smoothed / 2 + Math.min(apiInFlight, settings.busyFrom * 1.5) / 2;
      if (!yielding && smoothed >= settings.busyFrom) set(true);
      else if (yielding && smoothed < settings.calmBelow) set(false);
    },
    yielding: () => yielding,
  };
}
