import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestAccount, expectJson, ISO_MICROS, tokenFor, type Json } from '../helpers/api.js';
import { shiftDays, createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { ABSOLUTE_URL, CAMPAIGN_CARD_KEYS, CAMPAIGN_KEYS, CAMPAIGN_TOP_UP_KEYS, expectKeys } from './shapes.js';

let app: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  app = await startTestApp();
  api = client(app, await tokenFor(app, await createTestAccount(app)));
});
afterAll(async () => app?.close());

const campaign = async () => (await expectJson(await api.get('/api/get-campaign'), 200)).message;

describe('A17 get-campaign', () => {
  it('answers campaign null when no campaign runs today (disabled, ended or not started)', async () => {
    expect(await campaign()).toEqual({ campaign: null });
    const { db } = app.services;
    await createCampaign(db, { name: 'Disabled', status: 0, start: shiftDays(-1), end: shiftDays(1) });
    await createCampaign(db, { name: 'Ended', start: shiftDays(-10), end: shiftDays(-1) });
    await createCampaign(db, { name: 'Upcoming', start: shiftDays(1), end: shiftDays(5) });
    expect(await campaign()).toEqual({ campaign: null });
  });

  it('returns the running campaign with the services still in it, at campaign pricing', async () => {
    const { db, sql } = app.services;
    const topUp = await createTopUp(db, {
      slug: 'campaign-game',
      services: [{ name: '100 Diamonds', price: '10.00', discount: '1.00' }, { name: 'Capped', price: '5.00' }],
    });
    const card = await createCard(db, { services: [{ name: '$25', price: '25.00', discount: '10', discountType: 'percentage' }, { name: '$50', price: '50.00' }] });
    const running = await createCampaign(db, {
      name: 'Winter sale',
      start: shiftDays(0),
      end: shiftDays(10),
      topUpServices: [
        { serviceId: topUp.services[0]!.id, price: '8.00', discount: '0.50', maxSell: 40 },
        { serviceId: topUp.services[1]!.id, price: '4.00', maxSell: 5 },
      ],
      cardServices: [{ serviceId: card.services[0]!.id, price: '20.00', discount: '5', discountType: 'percentage', maxSell: 100 }],
    });
    // The second top-up service reached its cap and left the campaign.
    await sql`update campaign_top_up_services set left_at = now() where top_up_service_id = ${topUp.services[1]!.id}`;
    // Fixtures write the catalog directly (as an operator's SQL would), so the catalog cache is told here.
    await app.services.catalogCache.invalidate();

    const { campaign: body } = await campaign();
    expectKeys(body, CAMPAIGN_KEYS);
    expect(body).toMatchObject({ id: running.id, name: 'Winter sale', start_date: shiftDays(0), end_date: shiftDays(10), status: 1 });
    expect(body.created_at).toMatch(ISO_MICROS);
    expect(body.updated_at).toMatch(ISO_MICROS);

    expect(body.topups).toHaveLength(1);
    const [listedTopUp] = body.topups as Json[];
    expectKeys(listedTopUp!, CAMPAIGN_TOP_UP_KEYS);
    expect(listedTopUp).toMatchObject({
      id: topUp.services[0]!.id,
      top_up_id: topUp.id,
      name: '100 Diamonds',
      price: 8,
      discount: 0.5,
      discount_type: 'flat',
      status: 1,
      offered_sell: 0,
      max_sell: 40,
      old_data: { price: '10.00', discount: '1.00', discount_type: 'flat' },
      campaign_data: { price: '8.00', discount: '0.50', discount_type: 'flat', max_sell: '40' },
    });
    expect(listedTopUp!.image_path).toMatch(ABSOLUTE_URL);
    expect(listedTopUp!.created_at).toMatch(ISO_MICROS);

    expect(body.cards).toHaveLength(1);
    expectKeys(body.cards[0], CAMPAIGN_CARD_KEYS);
    expect(body.cards[0]).toMatchObject({
      id: card.services[0]!.id,
      card_id: card.id,
      price: 20,
      discount: 5,
      discount_type: 'percentage',
      max_sell: 100,
      old_data: { price: '25.00', discount: '10.00', discount_type: 'percentage' },
      campaign_data: { price: '20.00', discount: '5.00', discount_type: 'percentage', max_sell: '100' },
    });
  });

  it('prices services in the campaign at the campaign price in top-up details', async () => {
    const details = (await expectJson(await api.get('/api/top-up/details?slug=campaign-game'), 200)).message.topUp;
    expect(details.active_services[0]).toMatchObject({
      is_offered: 1,
      price: 8,
      discountedAmount: 0.5,
      discountedPriceWithoutDiscount: 7.5,
      campaign_data: { price: '8.00', discount: '0.50', discount_type: 'flat', max_sell: '40' },
    });
  });
});
