/**
 * C22 as amended, one delivery path: the TOPUP_PROVIDER=http provider is a provider row, written at every start from
 * TOPUP_PROVIDER_URL and TOPUP_PROVIDER_SECRET. A service never given routes goes to it (one set to [] waits for an operator); its attempts are recorded, settled
 * and shown as any provider's; an order it may have delivered is never sent to a route added later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncEnvironmentProvider } from '../../src/modules/providers/service.js';
import { adminOf, createTestAccount, expectFailure, expectJson, type Json } from '../helpers/api.js';
import { createOrder, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { waitFor } from '../helpers/system.js';

const ENV_SECRET = 'environment-secret-0123456789';
const ROUTED_SECRET = 'routed-secret-0123456789';

let app: TestApp;
let fromEnvironment: HttpSupplier;
let routed: HttpSupplier;
let accountId: number;

const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

beforeAll(async () => {
  fromEnvironment = await startHttpSupplier({ secret: ENV_SECRET });
  routed = await startHttpSupplier({ secret: ROUTED_SECRET });
  app = await startTestApp({
    env: { TOPUP_PROVIDER: 'http', TOPUP_PROVIDER_URL: fromEnvironment.url, TOPUP_PROVIDER_SECRET: ENV_SECRET },
    workers: true,
    workerOptions: { settleBaseMs: 100, reconciler: { intervalMs: 500, staleAfterMs: 1000 } },
  });
  accountId = (await createTestAccount(app, '0.00')).id;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([fromEnvironment?.close(), routed?.close()]);
});

const providers = async (): Promise<Json[]> => (await expectJson(await admin('GET', '/providers'), 200)).message;
const environmentProvider = async () => (await providers()).find((p) => p.from_environment)!;
const shown = async (utr: string): Promise<Json> => (await expectJson(await admin('GET', `/orders/${utr}`), 200)).message;
const outcomes = (view: Json) => (view.attempts as Json[]).map((attempt) => `${attempt.provider}:${attempt.outcome}`);

/** An accepted order of a new service (without routes, unless `routes` sets them first), handed to the fulfilment queue. */
async function order(routes?: unknown[]) {
  const topUp = await createTopUp(app.services.db, { services: [{ price: '6.00' }] });
  const serviceId = topUp.services[0]!.id;
  if (routes) await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, routes), 200);
  const placed = await createOrder(app.services.db, { accountId, topUpId: topUp.id, serviceId, unitPrice: '6.00', informations: { 'Player id': '777' } });
  await app.services.queues.fulfilment.add('fulfil', { orderId: placed.id, utr: placed.utr }, { jobId: placed.utr });
  return { utr: placed.utr, serviceId };
}

describe('the TOPUP_PROVIDER=http provider', () => {
  it('is a provider row, listed with its address and never its secret', async () => {
    const provider = await environmentProvider();
    expect(provider).toMatchObject({ name: 'TOPUP_PROVIDER', kind: 'http', base_url: fromEnvironment.url, status: 'active', from_environment: true });
    expect(JSON.stringify(await providers())).not.toContain(ENV_SECRET);
  });

  it('keeps the environment\'s name, address, credentials and status: a change of them is refused; its timeout may change', async () => {
    const { id } = await environmentProvider();
    const message = "This provider is TOPUP_PROVIDER's: its name, address, credentials and status are set from the environment at every start.";
    for (const patch of [{ base_url: routed.url }, { credentials: { secret: ROUTED_SECRET } }, { status: 'disabled' }, { name: 'Renamed' }]) {
      expect(await expectFailure(await admin('PATCH', `/providers/${id}`, patch), 409), JSON.stringify(patch)).toBe(message);
    }
    expect(await environmentProvider()).toMatchObject({ base_url: fromEnvironment.url, status: 'active', name: 'TOPUP_PROVIDER' });
    expect((await expectJson(await admin('PATCH', `/providers/${id}`, { timeout_ms: 4000 }), 200)).message.timeout_ms).toBe(4000);
  });

  it("delivers a service without routes, recorded as an attempt whose product code is the service's id", async () => {
    const { utr, serviceId } = await order();
    const view = await waitFor('the order to complete', async () => {
      const current = await shown(utr);
      return current.status === 1 && current;
    });
    expect(outcomes(view)).toEqual(['TOPUP_PROVIDER:completed']);
    expect(view.attempts[0]).toMatchObject({ product_code: String(serviceId), base_url: fromEnvironment.url });
    expect(fromEnvironment.ledger.get(utr)).toMatchObject({ deliveries: 1, fields: { 'Player id': '777' }, productCode: String(serviceId) });
  });

  it('is not the route of a service whose routes an operator set to []: its orders wait for the operator', async () => {
    const { utr } = await order([]);
    const view = await waitFor('the order to wait for an operator', async () => {
      const current = await shown(utr);
      return current.awaiting_operator_since !== null && current;
    });
    expect(view).toMatchObject({ status: 0, delivery: 'with_operator', attempts: [] });
    expect(fromEnvironment.ledger.has(utr)).toBe(false);
  });

  it('never sends an order it may have delivered to a route added meanwhile (one delivery path)', async () => {
    const { utr, serviceId } = await order();
    // It delivers and loses its answer, and its status queries meet a proxy's 404 page: the outcome stays unknown.
    fromEnvironment.behaviour.products[String(serviceId)] = { mode: 'dropAfterDelivering', statusMode: 'html404' };
    await waitFor('status queries that settle nothing', async () => (fromEnvironment.statusQueryTimes.get(utr)?.length ?? 0) >= 2);
    const provider = (await providers()).find((p) => p.base_url === routed.url) ?? (await expectJson(await admin('POST', '/providers', { name: 'Routed', kind: 'http', base_url: routed.url, credentials: { secret: ROUTED_SECRET } }), 200)).message;
    await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, [{ provider_id: provider.id, product_code: 'R-1' }]), 200);
    const queries = fromEnvironment.statusQueryTimes.get(utr)!.length;
    await waitFor('another status query at the first provider', async () => fromEnvironment.statusQueryTimes.get(utr)!.length >= queries + 1);
    expect(routed.ledger.has(utr)).toBe(false);
    expect(await shown(utr)).toMatchObject({ status: 0, delivery: 'with_supplier' });

    // Its status page is back: the attempt settles as delivered, by the provider that delivered it, once.
    fromEnvironment.behaviour.products[String(serviceId)] = { mode: 'dropAfterDelivering', statusMode: 'answer' };
    const view = await waitFor('the order to complete', async () => {
      const current = await shown(utr);
      return current.status === 1 && current;
    });
    expect(outcomes(view)).toEqual(['TOPUP_PROVIDER:completed']);
    expect(fromEnvironment.ledger.get(utr)!.deliveries).toBe(1);
    expect(routed.ledger.has(utr)).toBe(false);
  });

  it('with TOPUP_PROVIDER=manual at the next start it is disabled: a new order waits for an operator', async () => {
    await syncEnvironmentProvider(app.services.db, { ...app.services.config, TOPUP_PROVIDER: 'manual' });
    try {
      expect((await environmentProvider()).status).toBe('disabled');
      const { utr } = await order();
      const view = await waitFor('the order to wait for an operator', async () => {
        const current = await shown(utr);
        return current.awaiting_operator_since !== null && current;
      });
      expect(view).toMatchObject({ status: 0, delivery: 'with_operator', note: 'The service has no provider routes left.', attempts: [] });
      expect(fromEnvironment.ledger.has(utr)).toBe(false);
    } finally {
      await syncEnvironmentProvider(app.services.db, app.services.config);
    }
    expect((await environmentProvider()).status).toBe('active');
  });
});
