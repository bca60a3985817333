import { describe, expect, it } from 'vitest';
import { batcher, type BatchOptions } from '../../src/lib/batch.js';
import { fulfilmentJobs, fulfilmentPace, PLACEMENT_FIRST } from '../../src/modules/fulfilment/index.js';
import { sleep } from '../helpers/processes.js';

/** A batcher whose batches each take `runMs`, telling the size of each and when it started. */
function timedBatcher(options: BatchOptions, runMs = 0) {
  const started: Array<{ size: number; at: number }> = [];
  const t0 = performance.now();
  const add = batcher<number, number>(async (items) => {
    started.push({ size: items.length, at: performance.now() - t0 });
    if (runMs) await sleep(runMs);
    return items.map((value) => ({ status: 'fulfilled', value }));
  }, options);
  return { add, started };
}

describe('a batcher that lingers', () => {
  it('lets a short batch wait up to lingerMs for more, and each call gets its own result', async () => {
    const { add, started } = timedBatcher({ maxSize: 32, inFlight: 1, lingerMs: 80 });
    const first = add(1);
    await sleep(20);
    const later = [add(2), add(3)];
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3]);
    expect(started.map((b) => b.size)).toEqual([3]);
    // Counted from the first call: the later ones do not push the start back.
    expect(started[0]!.at).toBeGreaterThanOrEqual(75);
    expect(started[0]!.at).toBeLessThan(400);
  });

  it('starts what waits at the new pace once the options drop the wait', async () => {
    const options: BatchOptions = { maxSize: 32, inFlight: 1, lingerMs: 10_000 };
    const { add, started } = timedBatcher(options);
    const first = add(1);
    await sleep(20);
    options.lingerMs = 0;
    // The next call starts the batch: the 10 s wait armed under the old options is over.
    expect(await Promise.all([first, add(2)])).toEqual([1, 2]);
    expect(started.map((b) => b.size)).toEqual([2]);
  });

  it('starts a full batch at once, lingering or not', async () => {
    const { add, started } = timedBatcher({ maxSize: 4, inFlight: 1, lingerMs: 10_000 });
    expect(await Promise.all([1, 2, 3, 4].map(add))).toEqual([1, 2, 3, 4]);
    expect(started).toEqual([{ size: 4, at: expect.any(Number) }]);
    expect(started[0]!.at).toBeLessThan(1000);
  });

  it('reads its options at each start: a change made while it runs applies to the next batch', async () => {
    const options: BatchOptions = { maxSize: 32, inFlight: 1 };
    const { add, started } = timedBatcher(options, 30);
    const first = add(1);
    await sleep(5);
    options.lingerMs = 100;
    // The running batch's successors gather under the new option.
    await Promise.all([first, add(2)]);
    expect(started.map((b) => b.size)).toEqual([1, 1]);
    expect(started[1]!.at - started[0]!.at).toBeGreaterThanOrEqual(95);
  });
});

describe('placement first: the pace of card fulfilment follows the API process beside it', () => {
  it('yields while the API is busy (one batch transaction at a time, batches gathering), and comes back once it is calm', () => {
    const changes: boolean[] = [];
    const pace = fulfilmentPace((yielding) => changes.push(yielding));
    const usual = { ...pace.batch };
    expect(usual.inFlight).toBeGreaterThan(PLACEMENT_FIRST.inFlight);
    expect(usual.lingerMs ?? 0).toBe(0);

    // One busy quarter of a second among calm ones (or one long request, counted whole when it ends) does not flip it.
    for (const inFlight of [0, 0, 500, 0, 0]) pace.observe(inFlight);
    expect(pace.yielding()).toBe(false);

    for (const inFlight of [40, 40]) pace.observe(inFlight);
    expect(pace.yielding()).toBe(true);
    expect(pace.batch).toMatchObject({ inFlight: PLACEMENT_FIRST.inFlight, lingerMs: PLACEMENT_FIRST.lingerMs, maxSize: PLACEMENT_FIRST.maxSize });

    // Between the two thresholds it keeps its pace (no flapping around one figure).
    for (let i = 0; i < 10; i += 1) pace.observe((PLACEMENT_FIRST.busyFrom + PLACEMENT_FIRST.calmBelow) / 2);
    expect(pace.yielding()).toBe(true);

    for (let i = 0; i < 10; i += 1) pace.observe(0.5);
    expect(pace.yielding()).toBe(false);
    expect(pace.batch).toEqual(usual);
    expect(changes).toEqual([true, false]);
  });

  it('a worker that may yield takes jobs enough for full batches at either pace', () => {
    expect(fulfilmentJobs(true)).toBe(Math.max(PLACEMENT_FIRST.maxSize * (PLACEMENT_FIRST.inFlight + 1), fulfilmentJobs(false)));
    expect(fulfilmentJobs(false)).toBeLessThan(fulfilmentJobs(true));
  });

  it('each pace is its own: yielding in one worker leaves the shared defaults alone', () => {
    const busy = fulfilmentPace();
    for (let i = 0; i < 5; i += 1) busy.observe(100);
    expect(busy.yielding()).toBe(true);
    expect(fulfilmentPace().batch.inFlight).toBeGreaterThan(PLACEMENT_FIRST.inFlight);
  });
});
