import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_STATUS } from '../../src/modules/order-state/state.js';
import { expectFailure } from '../helpers/api.js';
import { createCardService, createTopUpService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, placeCardOrder, placeTopUpOrder, stockCodes, waitForStatus } from '../workers/support.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workers: true });
});
afterAll(async () => app?.close());

describe('GET /api/order/details', () => {
  it('answers a card order as the card order list does, codes included', async () => {
    const buyer = await createBuyer(app);
    const service = await createCardService(app.services.db, '3.00');
    const codes = await stockCodes(app, service.serviceId, 2);
    const utr = await placeCardOrder(buyer, [[service.serviceId, 2]]);
    await waitForStatus(app, utr, ORDER_STATUS.completed);
    const { data: details } = await buyer.store.GET('/api/order/details', { params: { query: { utr } } });
    const { data: list } = await buyer.store.GET('/api/get-card/orders');
    expect(details).toEqual({ status: 'success', message: list.message.data[0] });
    const [line] = details.message.order_details;
    expect(line && 'card_codes' in line ? line.card_codes.sort() : []).toEqual([...codes].sort());
  });

  it('answers a top-up order as the top-up order list does', async () => {
    const buyer = await createBuyer(app);
    const { topUpId, serviceId } = await createTopUpService(app.services.db, '5.00');
    const utr = await placeTopUpOrder(buyer, { id: topUpId, services: [{ id: serviceId }] });
    const { data: details } = await buyer.store.GET('/api/order/details', { params: { query: { utr } } });
    const { data: list } = await buyer.store.GET('/api/get-topup/orders');
    expect(details.message).toEqual(list.message.data[0]);
    expect(details.message.utr).toBe(utr);
  });

  it('answers 404 for an unknown utr and 422 without one', async () => {
    const buyer = await createBuyer(app);
    expect(await expectFailure(await buyer.api.get('/api/order/details?utr=C0NOSUCHORDER'), 404)).toBe('No order with the utr "C0NOSUCHORDER".');
    expect(await expectFailure(await buyer.api.get('/api/order/details'), 422)).toEqual(['The utr field is required.']);
  });

  it("answers another account's order as unknown, and refuses a missing or bad token", async () => {
    const owner = await createBuyer(app);
    const other = await createBuyer(app);
    const service = await createCardService(app.services.db, '1.00');
    const utr = await placeCardOrder(owner, [[service.serviceId, 1]]);
    expect(await expectFailure(await other.api.get(`/api/order/details?utr=${utr}`), 404)).toBe(`No order with the utr "${utr}".`);
    expect((await app.request(`/api/order/details?utr=${utr}`)).status).toBe(401);
    expect((await app.request(`/api/order/details?utr=${utr}`, { headers: { Authorization: 'Bearer not-a-token' } })).status).toBe(401);
    // Interface B's api key is not an Interface A credential.
    const [account] = await app.services.sql`select id from accounts where id = ${owner.accountId}`;
    expect(account).toBeDefined();
    expect((await app.request(`/api/order/details?utr=${utr}`, { headers: { 'X-API-Key': 'ak_anything' } })).status).toBe(401);
  });
});
