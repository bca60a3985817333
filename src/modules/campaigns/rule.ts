import { and, isNull, lt, sql, type SQL } from 'drizzle-orm';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import { campaignCardServices, campaigns, campaignTopUpServices, type ProductKind } from '../../db/schema.js';

/**
 * C9, the one rule for which campaign applies, used by placement, sync, refunds and the catalog:
 * a campaign is live when `status = 1` and `today` (UTC) lies within its dates; of several live
 * campaigns the one that started last applies, then the higher id.
 */
export const campaignIsLive = (today: SQL | string) =>
  sql`${campaigns.status} = 1 and ${today}::date between ${campaigns.startDate} and ${campaigns.endDate}`;

export const campaignPrecedence = sql`${campaigns.startDate} desc, ${campaigns.id} desc`;

/**
 * A membership still in its campaign: not left at its cap, nor at it (the units sold before the campaign was paused or
 * overtaken count). Placement, the sync, refunds, the catalog and the admin view all ask this.
 */
export const stillInCampaign = (members: typeof campaignCardServices | typeof campaignTopUpServices): SQL =>
  and(isNull(members.leftAt), lt(members.sold, members.maxSell))!;

/**
 * The membership that applies to the service `serviceId` (a column or value) on `today`: of a live campaign, still in
 * it (stillInCampaign), first by precedence. A subquery of at most one row: campaign_id, price, discount,
 * discount_type, max_sell, sold (the units sold in it before, see schema.ts).
 */
export const applicableMembership = (kind: ProductKind, serviceId: SQL, today: SQL | string) => {
  const { members, memberService } = PRODUCT_KINDS[kind];
  return sql`(
    select ${members.campaignId} as campaign_id, ${members.price} as price, ${members.discount} as discount,
           ${members.discountType} as discount_type, ${members.maxSell} as max_sell, ${members.sold} as sold
    from ${members} join ${campaigns} on ${campaigns.id} = ${members.campaignId}
    where ${memberService} = ${serviceId} and ${stillInCampaign(members)} and ${campaignIsLive(today)}
    order by ${campaignPrecedence}
    limit 1)`;
};
