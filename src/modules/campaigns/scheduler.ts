import { sql } from 'drizzle-orm';
import type { Services } from '../../http/context.js';
import { CAMPAIGN_SYNC_LOCK, syncCampaigns } from './service.js';

/**
 * Runs syncCampaigns every `intervalMs` from a plain timer, so campaign start, cap and end keep
 * working after Redis loses its data. Across processes one run at a time: a process that finds the
 * advisory lock taken skips its turn instead of queueing behind it.
 */
export function startCampaignSync(services: Services, intervalMs = 2000): { close: () => Promise<void> } {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= services.db
      .transaction(async (tx) => {
        const [row] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${CAMPAIGN_SYNC_LOCK}) as locked`);
        if (!row?.locked) return;
        const result = await syncCampaigns(tx);
        if (result.started + result.capped + result.ended === 0) return;
        services.logger.info('campaigns synced', result);
        // Prices changed: no process may keep serving the old ones from its catalog cache.
        await services.catalogCache.invalidate();
      })
      .catch((err: unknown) => services.logger.warn('campaign sync failed', { err }))
      .finally(() => {
        running = null;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    close: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
