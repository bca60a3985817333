import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import {
  campaignCardServices,
  campaigns,
  campaignTopUpServices,
  cards,
  cardServices,
  topUps,
  topUpServices,
  type DiscountType,
} from '../../db/schema.js';
import { utcToday } from '../../lib/time.js';
import { toSnapshot } from './pricing.js';
import { ACTIVE, liveProduct, PRODUCT_KINDS, type KindTables } from '../../db/kinds.js';
import { applicableMembership, campaignIsLive, campaignPrecedence, stillInCampaign } from './rule.js';

/** Serialises campaign syncs across processes (seed, API and worker hosts). */
export const CAMPAIGN_SYNC_LOCK = 7301003;

export type SyncResult = { started: number; capped: number; ended: number };

/**
 * Brings every service in line with the campaigns of `today` (C9). Idempotent: a second run
 * changes nothing. In order: services at their cap leave (membership `left_at` set, final
 * `offered_sell` kept); services whose campaign no longer applies (ended, disabled, or overtaken by a
 * campaign that started later) are restored; services with an applicable campaign not yet applied take
 * its pricing. Which campaign applies is the one rule of `rule.ts`.
 */
export async function syncCampaigns(db: DbOrTx, today: string = utcToday()): Promise<SyncResult> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${CAMPAIGN_SYNC_LOCK})`);
    const result: SyncResult = { started: 0, capped: 0, ended: 0 };
    for (const kind of ['card', 'top_up'] as const) {
      result.capped += await leaveAtCap(tx, PRODUCT_KINDS[kind]);
      result.ended += await restoreInapplicable(tx, kind, today);
      result.started += await applyApplicable(tx, kind, today);
    }
    return result;
  });
}

/** Restores a service's own pricing from `old_data` and takes it out of any campaign. */
const restorePricing = () => sql`
  price = coalesce((old_data->>'price')::numeric, price),
  discount = coalesce((old_data->>'discount')::numeric, discount),
  discount_type = coalesce(old_data->>'discount_type', discount_type),
  is_offered = 0, campaign_id = null, campaign_data = null, old_data = null, updated_at = now()`;

/**
 * Takes the services `leaving` selects (their id and campaign_id, locked) out of their campaign: their own pricing
 * back, and the units sold kept on the membership, so that a campaign paused, moved or overtaken and then applying
 * again takes up its count where it stopped (C9: never more than max_sell units at its price); a membership at its
 * cap is left for good (`left_at`). The count stays on the service too (C9: a service that left keeps it).
 */
async function leave(tx: DbOrTx, { service: services, members, memberService }: KindTables, leaving: SQL): Promise<number> {
  const [row] = await tx.execute<{ left: number }>(sql`
    with gone as (
      update ${services} s set ${restorePricing()}
      from (${leaving}) l
      where s.id = l.id
      returning s.id, l.campaign_id, s.offered_sell, s.max_sell),
    kept as (
      update ${members} set sold = gone.offered_sell,
        left_at = case when gone.offered_sell >= gone.max_sell then coalesce(${members.leftAt}, now()) else ${members.leftAt} end
      from gone
      where ${memberService} = gone.id and ${members.campaignId} = gone.campaign_id)
    select count(*)::int as left from gone`);
  return row!.left;
}

/** The services at their cap leave their campaign for good. */
const leaveAtCap = (tx: DbOrTx, tables: KindTables) =>
  leave(tx, tables, sql`select id, campaign_id from ${tables.service} where is_offered = 1 and offered_sell >= max_sell for no key update`);

/** The services whose campaign no longer applies (ended, disabled, moved, overtaken) leave it. */
const restoreInapplicable = (tx: DbOrTx, kind: 'card' | 'top_up', today: string) =>
  leave(
    tx,
    PRODUCT_KINDS[kind],
    sql`select s.id, s.campaign_id from ${PRODUCT_KINDS[kind].service} s
      where s.is_offered = 1 and s.campaign_id is distinct from (select campaign_id from ${applicableMembership(kind, sql`s.id`, today)} m)
      for no key update of s`,
  );

async function applyApplicable(tx: DbOrTx, kind: 'card' | 'top_up', today: string): Promise<number> {
  const { service: services } = PRODUCT_KINDS[kind];
  const candidates = await tx.execute<{
    id: number;
    own_price: string;
    own_discount: string;
    own_discount_type: DiscountType;
    campaign_id: number;
    price: string;
    discount: string;
    discount_type: DiscountType;
    max_sell: number;
    sold: number;
  }>(sql`
    select s.id, s.price as own_price, s.discount as own_discount, s.discount_type as own_discount_type,
           m.campaign_id, m.price, m.discount, m.discount_type, m.max_sell, m.sold
    from ${services} s cross join lateral ${applicableMembership(kind, sql`s.id`, today)} m
    where s.is_offered = 0`);
  for (const row of candidates) {
    const own = toSnapshot({ price: row.own_price, discount: row.own_discount, discountType: row.own_discount_type });
    const offer = toSnapshot({ price: row.price, discount: row.discount, discountType: row.discount_type }, row.max_sell);
    await tx.execute(sql`
      update ${services}
      set old_data = ${JSON.stringify(own)}::jsonb, campaign_data = ${JSON.stringify(offer)}::jsonb,
          price = ${offer.price}::numeric, discount = ${offer.discount}::numeric, discount_type = ${offer.discount_type},
          is_offered = 1, campaign_id = ${row.campaign_id}, max_sell = ${row.max_sell}, offered_sell = ${row.sold}, updated_at = now()
      where id = ${row.id} and is_offered = 0`);
  }
  return candidates.length;
}

/**
 * The campaign that applies on `today` (C9, the one rule of rule.ts) with the services still in it: memberships not left at their cap
 * nor at it, of active services.
 */
export async function activeCampaign(db: DbOrTx, today: string) {
  const [campaign] = await db
    .select()
    .from(campaigns)
    .where(campaignIsLive(today))
    .orderBy(campaignPrecedence)
    .limit(1);
  if (!campaign) return null;
  const [topUpRows, cardRows] = await Promise.all([
    db
      .select({ service: topUpServices })
      .from(campaignTopUpServices)
      .innerJoin(topUpServices, eq(topUpServices.id, campaignTopUpServices.topUpServiceId))
      .innerJoin(topUps, eq(topUps.id, topUpServices.topUpId))
      .where(and(eq(campaignTopUpServices.campaignId, campaign.id), stillInCampaign(campaignTopUpServices), eq(topUpServices.status, ACTIVE), liveProduct('top_up')))
      .orderBy(asc(topUpServices.id)),
    db
      .select({ service: cardServices })
      .from(campaignCardServices)
      .innerJoin(cardServices, eq(cardServices.id, campaignCardServices.cardServiceId))
      .innerJoin(cards, eq(cards.id, cardServices.cardId))
      .where(and(eq(campaignCardServices.campaignId, campaign.id), stillInCampaign(campaignCardServices), eq(cardServices.status, ACTIVE), liveProduct('card')))
      .orderBy(asc(cardServices.id)),
  ]);
  return { campaign, topUpServices: topUpRows.map((r) => r.service), cardServices: cardRows.map((r) => r.service) };
}
