/** Campaigns, as the rest of the service sees them: the sync that starts, caps and ends them (C9). */
export { CAMPAIGN_SYNC_LOCK, syncCampaigns } from './service.js';
