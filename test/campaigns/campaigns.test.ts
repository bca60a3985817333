import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCampaignSync } from '../../workers/campaign-sync.js';
import { syncCampaigns } from '../../src/modules/campaigns/service.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { shiftDays, createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { adminOf, expectFailure, expectJson } from '../helpers/api.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const today = shiftDays(0);

/** A campaign, not yet applied, over one fresh card service (10.00, no discount) and one top-up service (5.00, 10 %). */
async function campaignFixture(start = shiftDays(-1), end = shiftDays(1), status = 1) {
  const { db } = app.services;
  const cardServiceId = (await createCard(db, { services: [{ price: '10.00' }] })).services[0]!.id;
  const topUpServiceId = (await createTopUp(db, { services: [{ price: '5.00', discount: '10', discountType: 'percentage' }] })).services[0]!.id;
  const campaign = await createCampaign(db, {
    name: 'Sale',
    start,
    end,
    status,
    applied: false,
    cardServices: [{ serviceId: cardServiceId, price: '8', discount: '1', maxSell: 3 }],
    topUpServices: [{ serviceId: topUpServiceId, price: '4.5', discount: '5', discountType: 'percentage', maxSell: 2 }],
  });
  return { campaignId: campaign.id, cardServiceId, topUpServiceId };
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
    const future = await campaignFixture(shiftDays(1), shiftDays(3));
    const disabled = await campaignFixture(shiftDays(-1), shiftDays(1), 0);
    await syncCampaigns(app.services.db, today);
    expect(await cardService(future.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    expect(await cardService(disabled.cardServiceId)).toMatchObject(ORIGINAL_CARD);
    await syncCampaigns(app.services.db, shiftDays(1));
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
    const f = await campaignFixture(shiftDays(-2), shiftDays(0));
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject({ is_offered: 1 });
    await syncCampaigns(app.services.db, shiftDays(1));
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

describe('campaign applying again (C9)', () => {
  const membership = async (campaignId: number, cardServiceId: number) =>
    (await app.services.sql`
      select sold, left_at from campaign_card_services where campaign_id = ${campaignId} and card_service_id = ${cardServiceId}`)[0]!;

  it('takes up the units sold where they stopped when a paused campaign runs again', async () => {
    const f = await campaignFixture();
    await syncCampaigns(app.services.db, today);
    await app.services.sql`update card_services set offered_sell = 2 where id = ${f.cardServiceId}`;
    await app.services.sql`update campaigns set status = 0 where id = ${f.campaignId}`;
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject({ ...ORIGINAL_CARD, offered_sell: 2 });
    expect(await membership(f.campaignId, f.cardServiceId)).toEqual({ sold: 2, left_at: null });

    await app.services.sql`update campaigns set status = 1 where id = ${f.campaignId}`;
    await syncCampaigns(app.services.db, today);
    // One unit of the 3 left at the campaign price, not 3 more.
    expect(await cardService(f.cardServiceId)).toMatchObject({ price: '8.00', is_offered: 1, max_sell: 3, offered_sell: 2 });
  });

  it('takes up its count when a campaign that overtook it ends, and leaves for good one paused at its cap', async () => {
    const f = await campaignFixture(shiftDays(-3), shiftDays(3));
    await syncCampaigns(app.services.db, today);
    await app.services.sql`update card_services set offered_sell = 1 where id = ${f.cardServiceId}`;
    await app.services.sql`update top_up_services set offered_sell = 2 where id = ${f.topUpServiceId}`;
    // A later campaign over the card service takes it (C9: the one that started last), then ends.
    const later = await createCampaign(app.services.db, { start: shiftDays(-1), end: shiftDays(1), applied: false, cardServices: [{ serviceId: f.cardServiceId, price: '7', maxSell: 5 }] });
    // The first campaign pauses with its top-up service at its cap: that membership is left for good.
    await app.services.sql`update campaigns set status = 0 where id = ${f.campaignId}`;
    await syncCampaigns(app.services.db, today);
    expect(await cardService(f.cardServiceId)).toMatchObject({ price: '7.00', is_offered: 1, max_sell: 5, offered_sell: 0 });
    expect(await membership(f.campaignId, f.cardServiceId)).toEqual({ sold: 1, left_at: null });
    const [topUpMembership] = await app.services.sql`
      select sold, left_at from campaign_top_up_services where campaign_id = ${f.campaignId} and top_up_service_id = ${f.topUpServiceId}`;
    expect(topUpMembership!.sold).toBe(2);
    expect(topUpMembership!.left_at).not.toBeNull();

    await app.services.sql`update card_services set offered_sell = 4 where id = ${f.cardServiceId}`;
    await app.services.sql`update campaigns set status = 1 where id = ${f.campaignId}`;
    await syncCampaigns(app.services.db, shiftDays(2));
    expect(await membership(later.id, f.cardServiceId)).toEqual({ sold: 4, left_at: null });
    expect(await cardService(f.cardServiceId)).toMatchObject({ price: '8.00', is_offered: 1, max_sell: 3, offered_sell: 1 });
    expect(await topUpService(f.topUpServiceId)).toMatchObject({ price: '5.00', is_offered: 0, offered_sell: 2 });
  });

  it('refuses a max_sell below the units a paused campaign sold, and one at them ends its run of that service', async () => {
    const f = await campaignFixture();
    await syncCampaigns(app.services.db, today);
    await app.services.sql`update card_services set offered_sell = 2 where id = ${f.cardServiceId}`;
    await expectJson(await adminOf(app)('PATCH', `/campaigns/${f.campaignId}`, { status: 0 }), 200);
    const lowered = await adminOf(app)('PATCH', `/campaigns/${f.campaignId}`, { card_services: [{ id: f.cardServiceId, price: '8', max_sell: 1 }] });
    expect(await expectFailure(lowered, 422)).toEqual(['The card services.0.max sell field must be at least 2, the units already sold in this campaign.']);
    await expectJson(await adminOf(app)('PATCH', `/campaigns/${f.campaignId}`, { card_services: [{ id: f.cardServiceId, price: '8', max_sell: 2 }] }), 200);
    expect(await membership(f.campaignId, f.cardServiceId)).toMatchObject({ sold: 2 });
    // Running again at its cap: the service keeps its own price and the campaign does not list it.
    const resumed = await expectJson(await adminOf(app)('PATCH', `/campaigns/${f.campaignId}`, { status: 1 }), 200);
    expect(await cardService(f.cardServiceId)).toMatchObject({ ...ORIGINAL_CARD, offered_sell: 2 });
    expect(resumed.message.cards).toEqual([]);
  });
});
