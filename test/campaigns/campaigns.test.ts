import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCampaignSync } from '../../workers/campaign-sync.js';
import { syncCampaigns } from '../../src/modules/campaigns/service.js';
import { utcToday } from '../../src/lib/time.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { insertCardService, insertTopUpService } from '../admin/fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const day = (offset: number) => utcToday(new Date(Date.now() + offset * 86_400_000));
const today = day(0);

/** A campaign over one fresh card service (10.00, no discount) and one top-up service (5.00, 10 %). */
async function campaignFixture(start = day(-1), end = day(1), status = 1) {
  const { sql, db } = app.services;
  const card = await insertCardService(db, '10.00');
  const topUp = await insertTopUpService(db, '5.00');
  await sql`update top_up_services set discount = 10, discount_type = 'percentage' where id = ${topUp.serviceId}`;
  const [campaign] = await sql`
    insert into campaigns (name, start_date, end_date, status) values ('Sale', ${start}, ${end}, ${status}) returning id`;
  await sql`insert into campaign_card_services (campaign_id, card_service_id, price, discount, discount_type, max_sell)
            values (${campaign!.id}, ${card.serviceId}, 8, 1, 'flat', 3)`;
  await sql`insert into campaign_top_up_services (campaign_id, top_up_service_id, price, discount, discount_type, max_sell)
            values (${campaign!.id}, ${topUp.serviceId}, 4.5, 5, 'percentage', 2)`;
  return { campaignId: campaign!.id as number, cardServiceId: card.serviceId, topUpServiceId: topUp.serviceId };
}

const cardService = async (id: number) =>
  (await app.services.sql`
    select price, discount, discount_type, is_offered, max_sell, offered_sell, old_data, campaign_data
    from card_services where id = ${id}`)[0]!;
const topUpService = async (id: number) =>
  (await app.services.sql`
    select price, discount, discount_type, is_offered, max_sell, offered_sell, old_data, campaign_data
    from top_up_services where id = ${id}`)[0]!;

const ORIGINAL_CARD = { price: '10.00', discount: '0.00', discount_type: 'flat', is_offered: 0, old_data: null, campaign_data: null };

describe('campaign start (C9)', () => {
  it('applies the campaign pricing to every member, saving the old pricing, once', async () => {
    const f = await campaignFixture();
    await syncCampaigns(app.services.db, today);

    expect(await cardService(f.cardServiceId)).toEqual({
      price: '8.00',
      discount: '1.00',
      discount_type: 'flat',
      is_offered: 1,
      max_sell: 3,
      offered_sell: 0,
      old_data: { price: '10.00', discount: '0.00', discount_type: 'flat' },
      campaign_data: { price: '8.00', discount: '1.00', discount_type: 'flat', max_sell: '3' },
    });
    expect(await topUpService(f.topUpServiceId)).toEqual({
      price: '4.50',
      discount: '5.00',
      discount_type: 'percentage',
      is_offered: 1,
      max_sell: 2,
      offered_sell: 0,
      old_data: { price: '5.00', discount: '10.00', discount_type: 'percentage' },
      campaign_data: { price: '4.50', discount: '5.00', discount_type: 'percentage', max_sell: '2' },
    });

    // Idempotent: a sale in progress is not reset and the saved pricing is not overwritten.
    await app.services.sql`update card_services set offered_sell = 1 where id = ${f.cardServiceId}`;
    const before = await cardService(f.cardServiceId);
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toEqual(before);
  });

  it('leaves services alone before the start date and in a disabled campaign', async () => {
    const future = await campaignFixture(day(1), day(3));
    const disabled = await campaignFixture(day(-1), day(1), 0);
    await syncCampaigns(app.services.db, today);
    expect(await cardService(future.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    expect(await cardService(disabled.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    await syncCampaigns(app.services.db, day(1));
    expect(await cardService(future.cardServiceId)).toMatchObject({ price: '8.00', is_offered: 1 });
  });
});

describe('campaign cap (C9)', () => {
  it('restores a service that sold max_sell units, keeps its count and does not take it back', async () => {
    const f = await campaignFixture();
    await syncCampaigns(app.services.db, today);
    await app.services.sql`update card_services set offered_sell = 3 where id = ${f.cardServiceId}`;
    await syncCampaigns(app.services.db, today);

    expect(await cardService(f.cardServiceId)).toEqual({ ...ORIGINAL_CARD, max_sell: 3, offered_sell: 3 });
    const [membership] = await app.services.sql`
      select left_at from campaign_card_services where campaign_id = ${f.campaignId} and card_service_id = ${f.cardServiceId}`;
    expect(membership!.left_at).not.toBeNull();
    // The top-up service, below its cap, stays in.
    expect(await topUpService(f.topUpServiceId)).toMatchObject({ is_offered: 1, price: '4.50' });

    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject({ is_offered: 0, offered_sell: 3 });
  });

  it('is taken out within seconds by the running campaign sync', async () => {
    const f = await campaignFixture();
    const sync = startCampaignSync(app.services, 100);
    try {
      await expect.poll(async () => (await topUpService(f.topUpServiceId)).is_offered, { timeout: 5000 }).toBe(1);
      await app.services.sql`update top_up_services set offered_sell = 2 where id = ${f.topUpServiceId}`;
      await expect.poll(async () => (await topUpService(f.topUpServiceId)).is_offered, { timeout: 5000 }).toBe(0);
      expect(await topUpService(f.topUpServiceId)).toMatchObject({ price: '5.00', discount: '10.00', discount_type: 'percentage', offered_sell: 2 });
    } finally {
      await sync.close();
    }
  });
});

describe('campaign end (C9)', () => {
  it('restores every member after the end date', async () => {
    const f = await campaignFixture(day(-2), day(0));
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject({ is_offered: 1 });
    await syncCampaigns(app.services.db, day(1));
    expect(await cardService(f.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    expect(await topUpService(f.topUpServiceId)).toMatchObject({
      price: '5.00',
      discount: '10.00',
      discount_type: 'percentage',
      is_offered: 0,
      old_data: null,
      campaign_data: null,
    });
  });

  it('restores every member when the campaign is disabled', async () => {
    const f = await campaignFixture();
    await syncCampaigns(app.services.db, today);
    await app.services.sql`update campaigns set status = 0 where id = ${f.campaignId}`;
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    expect(await topUpService(f.topUpServiceId)).toMatchObject({ price: '5.00', is_offered: 0 });
  });
});
