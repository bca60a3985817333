/** Campaigns, as the workers see them: the sync that starts, caps and ends them (C9). */
export { CAMPAIGN_SYNC_LOCK, syncCampaigns } from './service.js';
