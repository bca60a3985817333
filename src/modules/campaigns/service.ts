import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { campaignCardServices, campaigns, campaignTopUpServices, cardServices, topUpServices, type DiscountType } from '../../db/schema.js';
import { utcToday } from '../../lib/time.js';
import { toSnapshot } from '../catalog/pricing.js';

/** Serialises campaign syncs across processes (seed, API and worker hosts). */
export const CAMPAIGN_SYNC_LOCK = 7301003;

export type SyncResult = { started: number; capped: number; ended: number };

/** One kind of campaign member: the service table and its membership table. */
const MEMBER_KINDS = [
  { services: cardServices, members: campaignCardServices, memberColumn: campaignCardServices.cardServiceId },
  { services: topUpServices, members: campaignTopUpServices, memberColumn: campaignTopUpServices.topUpServiceId },
] as const;

type MemberKind = (typeof MEMBER_KINDS)[number];

/**
 * Brings every service in line with the campaigns of `today` (C9). Idempotent: a second run
 * changes nothing. In order: services at their cap leave (membership `left_at` set, final
 * `offered_sell` kept); services whose campaign ended or was disabled are restored; members of
 * active campaigns not yet applied and not left take the campaign's pricing.
 */
export async function syncCampaigns(db: DbOrTx, today: string = utcToday()): Promise<SyncResult> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${CAMPAIGN_SYNC_LOCK})`);
    const result: SyncResult = { started: 0, capped: 0, ended: 0 };
    for (const kind of MEMBER_KINDS) {
      result.capped += await leaveAtCap(tx, kind, today);
      result.ended += await restoreEnded(tx, kind, today);
      result.started += await applyActive(tx, kind, today);
    }
    return result;
  });
}

/** Memberships of campaigns running on `today` that have not left. */
const liveMembership = (kind: MemberKind, today: string) => sql`
  select ${kind.members.campaignId} as campaign_id, ${kind.memberColumn} as service_id,
         ${kind.members.price} as price, ${kind.members.discount} as discount,
         ${kind.members.discountType} as discount_type, ${kind.members.maxSell} as max_sell
  from ${kind.members} join ${campaigns} on ${campaigns.id} = ${kind.members.campaignId}
  where ${campaigns.status} = 1 and ${today}::date between ${campaigns.startDate} and ${campaigns.endDate}
    and ${kind.members.leftAt} is null`;

/** Restores a service's own pricing from `old_data` and takes it out of any campaign. */
const restorePricing = () => sql`
  price = coalesce((old_data->>'price')::numeric, price),
  discount = coalesce((old_data->>'discount')::numeric, discount),
  discount_type = coalesce(old_data->>'discount_type', discount_type),
  is_offered = 0, campaign_data = null, old_data = null, updated_at = now()`;

async function leaveAtCap(tx: DbOrTx, kind: MemberKind, today: string): Promise<number> {
  const left = await tx.execute<{ id: number }>(sql`
    update ${kind.services} set ${restorePricing()}
    where is_offered = 1 and offered_sell >= max_sell
    returning id`);
  if (left.length === 0) return 0;
  const ids = sql.join(left.map((r) => sql`${r.id}`), sql`, `);
  await tx.execute(sql`
    update ${kind.members} set left_at = now()
    where ${kind.memberColumn} in (${ids}) and ${kind.members.leftAt} is null
      and ${kind.members.campaignId} in (
        select id from ${campaigns} where status = 1 and ${today}::date between start_date and end_date)`);
  return left.length;
}

async function restoreEnded(tx: DbOrTx, kind: MemberKind, today: string): Promise<number> {
  const restored = await tx.execute<{ id: number }>(sql`
    update ${kind.services} set ${restorePricing()}
    where is_offered = 1 and id not in (select service_id from (${liveMembership(kind, today)}) live)
    returning id`);
  return restored.length;
}

async function applyActive(tx: DbOrTx, kind: MemberKind, today: string): Promise<number> {
  // One campaign per service: the oldest running campaign wins if several list it.
  const candidates = await tx.execute<{
    id: number;
    own_price: string;
    own_discount: string;
    own_discount_type: DiscountType;
    price: string;
    discount: string;
    discount_type: DiscountType;
    max_sell: number;
  }>(sql`
    select distinct on (s.id) s.id, s.price as own_price, s.discount as own_discount, s.discount_type as own_discount_type,
           m.price, m.discount, m.discount_type, m.max_sell
    from ${kind.services} s join (${liveMembership(kind, today)}) m on m.service_id = s.id
    where s.is_offered = 0
    order by s.id, m.campaign_id`);
  for (const row of candidates) {
    const own = toSnapshot({ price: row.own_price, discount: row.own_discount, discountType: row.own_discount_type });
    const offer = toSnapshot({ price: row.price, discount: row.discount, discountType: row.discount_type }, row.max_sell);
    await tx.execute(sql`
      update ${kind.services}
      set old_data = ${JSON.stringify(own)}::jsonb, campaign_data = ${JSON.stringify(offer)}::jsonb,
          price = ${offer.price}::numeric, discount = ${offer.discount}::numeric, discount_type = ${offer.discount_type},
          is_offered = 1, max_sell = ${row.max_sell}, offered_sell = 0, updated_at = now()
      where id = ${row.id} and is_offered = 0`);
  }
  return candidates.length;
}
