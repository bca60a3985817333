import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { ACTIVE, PRODUCT_KINDS } from '../../db/kinds.js';
import { campaigns, type DiscountType, type ProductKind } from '../../db/schema.js';
import { validationError } from '../../core/errors.js';
import { fromCents, toCents } from '../../lib/money.js';
import { utcToday } from '../../lib/time.js';
import { CAMPAIGN_SYNC_LOCK, syncCampaigns } from '../campaigns/service.js';
import { stillInCampaign } from '../campaigns/rule.js';
import { toSnapshot } from '../campaigns/pricing.js';
import type { CampaignRow, CardServiceRow, TopUpServiceRow } from '../catalog/service.js';
import { change, discountProblem, found, type Status, type CatalogAdminDeps } from './service.js';

/**
 * Campaigns as operators change them (C19). A change writes the campaign and its memberships, reprices the
 * services the campaign already prices, then runs the campaign sync in the same transaction: a campaign whose
 * dates include today takes effect (or ends) when the change commits, by the one rule of campaigns/rule.ts. The
 * date-driven starts and ends stay with the periodic sync of the worker processes.
 */

export type CampaignMember = { id: number; price: string; discount?: string; discount_type?: DiscountType; max_sell: number };

export type CampaignInput = {
  name?: string;
  start_date?: string;
  end_date?: string;
  status?: Status;
  top_up_services?: CampaignMember[];
  card_services?: CampaignMember[];
};

export type NewCampaign = CampaignInput & { name: string; start_date: string; end_date: string };

/** A campaign with the services still in it (not left at their cap), whatever their status. */
export type CampaignView = { campaign: CampaignRow; topUpServices: TopUpServiceRow[]; cardServices: CardServiceRow[] };

/** Each kind's list in the body, and its name in messages. */
const MEMBER_LISTS = {
  top_up: { field: 'top_up_services', label: 'top up services' },
  card: { field: 'card_services', label: 'card services' },
} as const;

/**
 * The sync's lock, taken before any service row: the sync takes it first too, so a change and a sync running at
 * once take turns instead of each holding what the other waits for.
 */
const holdSync = (tx: Tx) => tx.execute(sql`select pg_advisory_xact_lock(${CAMPAIGN_SYNC_LOCK})`);

function checkDates(start: string, end: string) {
  if (end < start) throw validationError(['The end date field must be a date after or equal to start date.']);
}

async function members<K extends ProductKind>(tx: Tx, kind: K, campaignId: number) {
  const { service, members: table, memberService } = PRODUCT_KINDS[kind];
  const rows = await tx
    .select({ service })
    .from(table)
    .innerJoin(service, eq(service.id, memberService))
    .where(and(eq(table.campaignId, campaignId), stillInCampaign(table)))
    .orderBy(asc(service.id));
  return rows.map((r) => r.service);
}

async function campaignView(tx: Tx, id: number): Promise<CampaignView> {
  const campaign = await found(tx.select().from(campaigns).where(eq(campaigns.id, id)), 'campaign', id);
  return {
    campaign,
    topUpServices: (await members(tx, 'top_up', id)) as TopUpServiceRow[],
    cardServices: (await members(tx, 'card', id)) as CardServiceRow[],
  };
}

/**
 * Adds or reprices the campaign's services of one kind. Every service named must exist (422 otherwise). A
 * service this campaign already prices takes the new pricing at once and keeps its `offered_sell`, so `max_sell`
 * may not go below the units already sold, while it carries the campaign or before it left it (C9: `offered_sell`
 * never exceeds `max_sell`).
 */
async function saveMembers(tx: Tx, kind: ProductKind, campaignId: number, list: CampaignMember[]) {
  if (list.length === 0) return;
  const { service, members: table, memberService } = PRODUCT_KINDS[kind];
  const { label } = MEMBER_LISTS[kind];
  // Locked in id order, as placement locks them, so a sale and this change take turns.
  const rows = await tx
    .select({ id: service.id, isOffered: service.isOffered, campaignId: service.campaignId, offeredSell: service.offeredSell })
    .from(service)
    .where(inArray(service.id, list.map((m) => m.id)))
    .orderBy(asc(service.id))
    .for('no key update');
  const byId = new Map(rows.map((r) => [r.id, r]));
  // The units each service sold in this campaign before it last left it (paused, moved, overtaken).
  const soldBefore = new Map(
    (await tx.select({ id: memberService, sold: table.sold }).from(table).where(and(eq(table.campaignId, campaignId), inArray(memberService, list.map((m) => m.id))))).map(
      (r) => [r.id, r.sold],
    ),
  );
  const entries = list.map((m, i) => {
    const row = byId.get(m.id);
    if (!row) throw validationError([`The selected ${label}.${i}.id is invalid.`]);
    const pricing = { price: fromCents(toCents(m.price)), discount: fromCents(toCents(m.discount ?? '0')), discountType: m.discount_type ?? 'flat' };
    const problem = discountProblem(pricing);
    if (problem) throw validationError([`The ${label}.${i}.discount field ${problem}`]);
    const sold = row.isOffered === ACTIVE && row.campaignId === campaignId ? row.offeredSell : (soldBefore.get(m.id) ?? 0);
    if (m.max_sell < sold) {
      throw validationError([`The ${label}.${i}.max sell field must be at least ${sold}, the units already sold in this campaign.`]);
    }
    return { id: m.id, price: pricing.price, discount: pricing.discount, discount_type: pricing.discountType, max_sell: m.max_sell, campaign_data: toSnapshot(pricing, m.max_sell) };
  });
  const given = sql`jsonb_to_recordset(${JSON.stringify(entries)}::jsonb)
    as m(id int, price numeric, discount numeric, discount_type text, max_sell int, campaign_data jsonb)`;
  const serviceColumn = sql.identifier(memberService.name);
  await tx.execute(sql`
    insert into ${table} (campaign_id, ${serviceColumn}, price, discount, discount_type, max_sell)
    select ${campaignId}, m.id, m.price, m.discount, m.discount_type, m.max_sell from ${given}
    on conflict (campaign_id, ${serviceColumn}) do update
      set price = excluded.price, discount = excluded.discount, discount_type = excluded.discount_type, max_sell = excluded.max_sell`);
  await tx.execute(sql`
    update ${service} s
    set price = m.price, discount = m.discount, discount_type = m.discount_type, max_sell = m.max_sell,
        campaign_data = m.campaign_data, updated_at = now()
    from ${given}
    where s.id = m.id and s.is_offered = 1 and s.campaign_id = ${campaignId}`);
}

/** Memberships, then the sync, then the campaign as it now stands. */
async function settle(tx: Tx, id: number, input: CampaignInput): Promise<CampaignView> {
  for (const kind of ['top_up', 'card'] as const) await saveMembers(tx, kind, id, input[MEMBER_LISTS[kind].field] ?? []);
  await syncCampaigns(tx);
  return campaignView(tx, id);
}

export const createCampaign = (deps: CatalogAdminDeps, input: NewCampaign) =>
  change(deps, async (tx) => {
    checkDates(input.start_date, input.end_date);
    await holdSync(tx);
    const [row] = await tx
      .insert(campaigns)
      .values({ name: input.name, startDate: input.start_date, endDate: input.end_date, status: input.status })
      .returning({ id: campaigns.id });
    return settle(tx, row!.id, input);
  });

export const updateCampaign = (deps: CatalogAdminDeps, id: number, input: CampaignInput) =>
  change(deps, async (tx) => {
    await holdSync(tx);
    const current = await found(tx.select().from(campaigns).where(eq(campaigns.id, id)).for('no key update'), 'campaign', id);
    if (input.start_date !== undefined || input.end_date !== undefined) {
      checkDates(input.start_date ?? current.startDate, input.end_date ?? current.endDate);
    }
    await tx
      .update(campaigns)
      .set({ name: input.name, startDate: input.start_date, endDate: input.end_date, status: input.status, updatedAt: sql`now()` })
      .where(eq(campaigns.id, id));
    return settle(tx, id, input);
  });

/** Ends a campaign now: disabled, its end moved up to today at the latest, its services restored from `old_data`. */
export const endCampaign = (deps: CatalogAdminDeps, id: number) =>
  change(deps, async (tx) => {
    await holdSync(tx);
    const today = utcToday();
    await found(
      tx
        .update(campaigns)
        .set({ status: 0, endDate: sql`least(${campaigns.endDate}, ${today}::date)`, updatedAt: sql`now()` })
        .where(eq(campaigns.id, id))
        .returning({ id: campaigns.id }),
      'campaign',
      id,
    );
    await syncCampaigns(tx, today);
    return campaignView(tx, id);
  });
