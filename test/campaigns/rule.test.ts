import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncCampaigns } from '../../src/modules/campaigns/service.js';
import { refundOrder } from '../../src/modules/fulfilment/refunds.js';
import { buyer, expectJson } from '../helpers/api.js';
import { shiftDays, createCampaign, createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

/**
 * C9: a service listed in two running campaigns takes the one that started last (then the higher id),
 * and sync, placement, refunds and the catalog all follow that one rule, so an order line names the
 * campaign that priced it and a refund releases units against that same campaign.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());


/** A campaign over one card service, left for the sync to apply. */
const campaign = async (name: string, start: string, serviceId: number, price: string, maxSell: number) =>
  (await createCampaign(app.services.db, { name, start, end: shiftDays(5), applied: false, cardServices: [{ serviceId, price, maxSell }] })).id;

const service = async (id: number) =>
  (await app.services.sql<{ price: string; campaign_id: number | null; offered_sell: number; is_offered: number }[]>`
    select price, campaign_id, offered_sell, is_offered from card_services where id = ${id}`)[0]!;

describe('two running campaigns over one service (C9)', () => {
  it('the one that started last applies everywhere, even when it has the lower id', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const serviceId = card.services[0]!.id;
    // Created first (lower id) but started later: this is the campaign that applies.
    const later = await campaign('Started yesterday', shiftDays(-1), serviceId, '7.00', 5);
    const earlier = await campaign('Started three days ago', shiftDays(-3), serviceId, '8.00', 50);
    expect(later).toBeLessThan(earlier);

    await syncCampaigns(app.services.db);
    expect(await service(serviceId)).toMatchObject({ price: '7.00', campaign_id: later, is_offered: 1 });

    const { api } = await buyer(app);
    const shown = await expectJson(await api.get('/api/get-campaign'), 200);
    expect(shown.message.campaign.id).toBe(later);
    expect(shown.message.campaign.cards.map((s: { id: number }) => s.id)).toContain(serviceId);

    const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [2] }), 200);
    const utr = placed.message.utr as string;
    const [line] = await app.services.sql<{ campaign_id: number; campaign_units: number; campaign_unit_price: string }[]>`
      select l.campaign_id, l.campaign_units, l.campaign_unit_price from order_lines l join orders o on o.id = l.order_id
      where o.utr = ${utr}`;
    expect(line).toEqual({ campaign_id: later, campaign_units: 2, campaign_unit_price: '7.00' });
    expect((await service(serviceId)).offered_sell).toBe(2);

    // The refund gives the units back to the campaign that priced them.
    await refundOrder(app.services.db, utr, 'customer cancelled');
    expect((await service(serviceId)).offered_sell).toBe(0);
  });

  it('when the applying campaign ends, the service moves to the other running one with a fresh count', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '10.00' }] });
    const serviceId = card.services[0]!.id;
    const earlier = await campaign('Long sale', shiftDays(-3), serviceId, '8.00', 50);
    const later = await campaign('Flash sale', shiftDays(-1), serviceId, '7.00', 5);
    await syncCampaigns(app.services.db);
    expect(await service(serviceId)).toMatchObject({ price: '7.00', campaign_id: later });

    const { api } = await buyer(app);
    const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }), 200);
    await app.services.sql`update campaigns set status = 0 where id = ${later}`;
    // Before the sync runs, no unit sells at the ended campaign's price and none is counted against the other.
    const between = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }), 200);
    const [gap] = await app.services.sql`
      select l.campaign_id, l.unit_price from order_lines l join orders o on o.id = l.order_id where o.utr = ${between.message.utr}`;
    expect(gap).toEqual({ campaign_id: null, unit_price: '10.00' });

    await syncCampaigns(app.services.db);
    expect(await service(serviceId)).toMatchObject({ price: '8.00', campaign_id: earlier, offered_sell: 0, is_offered: 1 });
    // A refund of the order priced by the ended campaign releases nothing against the new one.
    await refundOrder(app.services.db, placed.message.utr, 'late');
    expect((await service(serviceId)).offered_sell).toBe(0);
  });
});
