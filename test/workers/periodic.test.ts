/**
 * The periodic runs of the worker processes (reconciler, campaign sync, …): one at a time across processes, each in a
 * transaction, and what must only happen once its writes are visible to everyone (a job that reads them, a message
 * telling other processes of a change) happens after the commit, never before it and never after a rollback.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPeriodically } from '../../src/db/periodic.js';
import { startCampaignSync } from '../../workers/campaign-sync.js';
import { createCampaign, createCard, shiftDays } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { connectRedis, pubSub } from '../../src/lib/redis.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  await app.services.sql`create table periodic_probe (run int not null)`;
});
afterAll(async () => app?.close());

const LOCK = 7_309_901;
const probes = async () => (await app.services.sql<{ n: number }[]>`select count(*)::int as n from periodic_probe`)[0]!.n;

describe('runPeriodically', () => {
  it('runs what a run returns once its transaction has committed: another connection sees its writes', async () => {
    const seen: number[] = [];
    const errors: unknown[] = [];
    let runs = 0;
    const periodic = runPeriodically(app.services.db, { lockKey: LOCK, intervalMs: 20, onError: (err) => errors.push(err) }, async (tx) => {
      await tx.execute(sql`insert into periodic_probe values (${++runs})`);
      return async () => void seen.push(await probes());
    });
    await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    await periodic.close();
    // Each after-commit read saw its own run's row (and those before it).
    expect(seen.slice(0, 3)).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
  });

  it('never runs it after a rollback', async () => {
    const after: string[] = [];
    const errors: unknown[] = [];
    const periodic = runPeriodically(app.services.db, { lockKey: LOCK + 1, intervalMs: 20, onError: (err) => errors.push(err) }, async (tx) => {
      await tx.execute(sql`insert into periodic_probe values (-1)`);
      if (errors.length < 2) throw new Error('run failed');
      return async () => void after.push('ran');
    });
    await expect.poll(() => after.length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    await periodic.close();
    expect(errors).toHaveLength(2);
    // The two failed runs left no row: only the run that committed did.
    expect((await app.services.sql`select count(*)::int as n from periodic_probe where run = -1`)[0]!.n).toBeGreaterThanOrEqual(1);
    expect(after.length).toBe((await app.services.sql`select count(*)::int as n from periodic_probe where run = -1`)[0]!.n);
  });
});

describe('a nudged periodic run', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('runs soon instead of at the interval, and nudges during a run make one run after it', async () => {
    const runs: number[] = [];
    let release = () => {};
    const periodic = runPeriodically(app.services.db, { lockKey: LOCK + 2, intervalMs: 600_000, onError: () => {} }, async () => {
      runs.push(Date.now());
      // The second run waits until told to end, so the nudges below arrive while it is in progress.
      if (runs.length === 2) await new Promise<void>((resolve) => (release = resolve));
    });
    try {
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(1);
      periodic.nudge();
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(2);
      for (let i = 0; i < 5; i++) periodic.nudge();
      release();
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(3);
      await sleep(300);
      // One run for the five nudges, and none more before the 10-minute interval.
      expect(runs).toHaveLength(3);
    } finally {
      await periodic.close();
    }
  });

  it('waits its least gap after the last run ended, and a closed one ignores nudges', async () => {
    const runs: number[] = [];
    const periodic = runPeriodically(app.services.db, { lockKey: LOCK + 3, intervalMs: 600_000, minGapMs: 400, onError: () => {} }, async () => {
      runs.push(Date.now());
    });
    try {
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(1);
      periodic.nudge();
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(2);
      expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(390);
    } finally {
      await periodic.close();
    }
    periodic.nudge();
    await sleep(600);
    expect(runs).toHaveLength(2);
  });

  it('tries once more when its nudged run found another process running: that run may have read too early', async () => {
    const runs: number[] = [];
    const lock = LOCK + 4;
    const periodic = runPeriodically(app.services.db, { lockKey: lock, intervalMs: 600_000, minGapMs: 2000, onError: () => {} }, async () => {
      runs.push(Date.now());
    });
    let unlock = () => {};
    try {
      await expect.poll(() => runs.length, { timeout: 5000 }).toBe(1);
      // Another process's run holds the lock for 3 s: the nudged run 2 s after the first finds it taken.
      const held = new Promise<void>((resolve) => (unlock = resolve));
      const holder = app.services.sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${lock})`;
        await held;
      });
      periodic.nudge();
      await sleep(3000);
      expect(runs).toHaveLength(1);
      unlock();
      await holder;
      // Its second try, 2 s after the skipped one, takes the lock (the interval is 10 minutes).
      await expect.poll(() => runs.length, { timeout: 8000 }).toBe(2);
    } finally {
      unlock();
      await periodic.close();
    }
  });
});

describe('the campaign sync', () => {
  it('tells the other processes that the catalog changed once the change is committed: a read then sees the new price', async () => {
    const service = (await createCard(app.services.db, { services: [{ price: '10.00' }] })).services[0]!.id;
    await createCampaign(app.services.db, { start: shiftDays(-1), end: shiftDays(1), applied: false, cardServices: [{ serviceId: service, price: '8', maxSell: 5 }] });
    const subscriber = connectRedis(app.services.config.redis, 'subscriber');
    const seenOnMessage: number[] = [];
    pubSub.onMessage(subscriber, (channel) => {
      if (channel !== `${app.services.config.BULLMQ_PREFIX}:catalog-changed`) return;
      void app.services.sql<{ is_offered: number }[]>`select is_offered from card_services where id = ${service}`.then(([row]) => seenOnMessage.push(row!.is_offered));
    });
    await pubSub.subscribe(subscriber, `${app.services.config.BULLMQ_PREFIX}:catalog-changed`);
    const sync = startCampaignSync(app.services, 100);
    try {
      await expect.poll(() => seenOnMessage.length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
      expect(seenOnMessage[0]).toBe(1);
    } finally {
      await sync.close();
      subscriber.disconnect();
    }
  });
});
