import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { CAMPAIGN_SYNC_LOCK, syncCampaigns } from '../src/modules/campaigns/index.js';
import type { Services } from '../src/runtime/services.js';

/** Runs syncCampaigns every `intervalMs` (campaign start, cap and end), one process at a time. */
export function startCampaignSync(services: Services, intervalMs = 2000): Periodic {
  return runPeriodically(
    services.db,
    { lockKey: CAMPAIGN_SYNC_LOCK, intervalMs, onError: (err) => services.logger.warn({ err }, 'campaign sync failed') },
    async (tx) => {
      const result = await syncCampaigns(tx);
      if (result.started + result.capped + result.ended === 0) return;
      services.logger.info(result, 'campaigns synced');
      // Prices changed: no process may keep serving the old ones from its catalog cache. Told once committed: a read
      // between the message and the commit would cache the old prices again.
      return () => services.catalogCache.invalidate();
    },
  );
}
