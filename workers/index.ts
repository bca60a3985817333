import type { Services } from '../src/http/context.js';

export type RunningWorkers = { close: () => Promise<void> };

/** Starts every BullMQ worker and scheduler of this service in the current process. */
export async function startWorkers(_services: Services): Promise<RunningWorkers> {
  return { close: async () => {} };
}
