/**
 * The routing rules of C22 with real workers, a real PostgreSQL and Redis, and local supplier servers that keep their
 * own ledgers: the next route only after a definite refusal, unknown outcomes settled by status queries and
 * callbacks (never by another provider), every route refused → refund, open circuits skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHttpBody } from '../../src/modules/suppliers/adapters/http.js';
import { checkBalances } from '../../src/modules/suppliers/balances.js';
import { routingJobId } from '../../src/queues/index.js';
import { adminOf, buyer, createTestAccount, expectFailure, expectJson, type Json } from '../helpers/api.js';
import { createOrder, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startDigiflazzServer, type DigiflazzServer } from '../helpers/suppliers/digiflazz-server.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { sleep } from '../helpers/processes.js';
import { waitFor } from '../helpers/system.js';

const SECRET_A = 'supplier-a-secret-0123456789';
const SECRET_B = 'supplier-b-secret-0123456789';

let app: TestApp;
let supplierA: HttpSupplier;
let supplierB: HttpSupplier;
let digiflazz: DigiflazzServer;
const providerIds: Record<string, number> = {};
let accountId: number;

const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

async function addProvider(body: Record<string, unknown>): Promise<number> {
  const created = await expectJson(await admin('POST', '/providers', body), 200);
  return created.message.id as number;
}

beforeAll(async () => {
  supplierA = await startHttpSupplier({ secret: SECRET_A });
  supplierB = await startHttpSupplier({ secret: SECRET_B });
  digiflazz = await startDigiflazzServer();
  app = await startTestApp({
    workers: true,
    workerOptions: { settleBaseMs: 100, reconciler: { intervalMs: 500, staleAfterMs: 1000 }, balanceIntervalMs: 300 },
    env: { PROVIDER_CIRCUIT_FAILURES: '3', PROVIDER_CIRCUIT_OPEN_SECONDS: '2' },
  });
  providerIds.a = await addProvider({ name: 'Supplier A', kind: 'http', base_url: supplierA.url, credentials: { secret: SECRET_A }, timeout_ms: 500 });
  providerIds.b = await addProvider({ name: 'Supplier B', kind: 'http', base_url: supplierB.url, credentials: { secret: SECRET_B } });
  providerIds.d = await addProvider({ name: 'Digiflazz', kind: 'digiflazz', base_url: digiflazz.url, credentials: digiflazz.credentials });
  accountId = (await createTestAccount(app, '0.00')).id;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([supplierA?.close(), supplierB?.close(), digiflazz?.close()]);
});

/** A top-up service routed to `providers` in that order, each with its product code `<name>-<service>` and cost 4.00. */
async function routedService(providers: string[]): Promise<number> {
  const topUp = await createTopUp(app.services.db, { name: 'Game', services: [{ name: 'Game 6.00', price: '6.00' }] });
  const serviceId = topUp.services[0]!.id;
  const routes = providers.map((name) => ({ provider_id: providerIds[name], product_code: `${name}-${serviceId}`, cost: '4.00' }));
  await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, routes), 200);
  return serviceId;
}

/** An accepted top-up order of `serviceId`, handed to the fulfilment queue as placement does. */
async function order(serviceId: number) {
  const [service] = await app.services.sql<{ top_up_id: number }[]>`select top_up_id from top_up_services where id = ${serviceId}`;
  const placed = await createOrder(app.services.db, { accountId, topUpId: service!.top_up_id, serviceId, unitPrice: '6.00', informations: { 'Player id': '777' } });
  await app.services.queues.fulfilment.add('fulfil', { orderId: placed.id, utr: placed.utr }, { jobId: placed.utr });
  return placed.utr;
}

const shown = async (utr: string): Promise<Json> => (await expectJson(await admin('GET', `/orders/${utr}`), 200)).message;

/** Waits until the order has left `initiate` or been handed to an operator, and returns it as the admin API shows it. */
const settled = (utr: string) =>
  waitFor(`order ${utr} to settle`, async () => {
    const view = await shown(utr);
    return (view.status !== 0 || view.awaiting_operator_since !== null) && view;
  }, 20_000);

const outcomes = (view: Json) => (view.attempts as Json[]).map((attempt) => `${attempt.provider}:${attempt.outcome}`);

describe('routing', () => {
  it('delivers through the first route and records the attempt with its cost', async () => {
    const utr = await order(await routedService(['a', 'b']));
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:completed']);
    expect(view.attempts[0]).toMatchObject({ cost: '4.00', status_queries: 0 });
    expect(supplierA.ledger.get(utr)?.deliveries).toBe(1);
    expect(supplierB.ledger.has(utr)).toBe(false);
  });

  it('goes to the next route after a definite refusal', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'refuse' };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:refused', 'Supplier B:completed']);
    expect(view.attempts[0].detail).toContain('out of stock');
    expect(supplierA.ledger.get(utr)?.deliveries).toBe(0);
    expect(supplierB.ledger.get(utr)?.deliveries).toBe(1);
  });

  it('refunds the order when every route refused, and nothing was delivered anywhere', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'refuse' };
    supplierB.behaviour.products[`b-${serviceId}`] = { mode: 'refuse', refuseStatus: 409 };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(2);
    expect(view.refunded_amount).toBe('6.00');
    expect(outcomes(view)).toEqual(['Supplier A:refused', 'Supplier B:refused']);
    expect(supplierA.ledger.get(utr)?.deliveries ?? 0).toBe(0);
    expect(supplierB.ledger.get(utr)?.deliveries ?? 0).toBe(0);
  });

  it('settles a lost answer by a status query at the same provider, never sending elsewhere', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'dropAfterDelivering' };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:completed']);
    expect(view.attempts[0].status_queries).toBe(1);
    expect(supplierA.ledger.get(utr)?.deliveries).toBe(1);
    expect(supplierB.ledger.has(utr)).toBe(false);
  });

  it('settles a timeout by status queries while the provider is still delivering', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'slow', slowMs: 1500 };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:completed']);
    expect(supplierB.ledger.has(utr)).toBe(false);
  });

  it('records the attempt before its request leaves, and never holds two open attempts for one order', async () => {
    const serviceId = await routedService(['b', 'a']);
    supplierB.behaviour.products[`b-${serviceId}`] = { mode: 'slow', slowMs: 1500 };
    const utr = await order(serviceId);
    // While B still holds the request, the attempt is there, as `sending`.
    await waitFor('the attempt to be recorded while its request is under way', async () => (await shown(utr)).attempts[0]?.outcome === 'sending');
    expect(supplierB.ledger.get(utr)?.deliveries).toBe(1);
    const [row] = await app.services.sql<{ id: number }[]>`select id::float8 as id from orders where utr = ${utr}`;
    await expect(app.services.sql`insert into provider_attempts (order_id, provider_id, product_code) values (${row!.id}, ${providerIds.a!}, 'second')`).rejects.toThrow(
      /provider_attempts_open_uq/,
    );
    expect(outcomes(await settled(utr))).toEqual(['Supplier B:completed']);
  });

  it('moves on after a 5xx only once the status query says the provider never received the order', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'error500' };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:refused', 'Supplier B:completed']);
    expect(view.attempts[0].detail).toBe('never received by the provider');
    expect(supplierB.ledger.get(utr)?.deliveries).toBe(1);
  });

  it('completes a pending order by its callback, once, whatever the callback repeats', async () => {
    const serviceId = await routedService(['b', 'a']);
    supplierB.behaviour.products[`b-${serviceId}`] = {
      mode: 'pending',
      completeAfterMs: 100,
      callbackUrl: `${app.baseUrl}/callbacks/providers/${providerIds.b}`,
      callbackTwice: true,
    };
    const utr = await order(serviceId);
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier B:completed']);
    await waitFor('both callbacks answered', async () => supplierB.callbacks.filter((c) => c.reference === utr && c.status !== undefined).length === 2);
    expect(supplierB.callbacks.filter((c) => c.reference === utr).map((c) => c.status)).toEqual([200, 200]);
    const [changes] = await app.services.sql`select count(*)::int as n from webhook_events where data->>'utr' = ${utr}`;
    expect(changes!.n).toBeLessThanOrEqual(1);
  });

  it('refuses a callback with a bad signature, for another provider, or about an order it was not sent', async () => {
    const serviceId = await routedService(['b']);
    const utr = await order(serviceId);
    await settled(utr);
    const body = JSON.stringify({ reference: utr, status: 'refused', reason: 'forged' });
    const post = (providerId: number, headers: Record<string, string>, text = body) =>
      app.request(`/callbacks/providers/${providerId}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: text });
    expect(await expectFailure(await post(providerIds.b!, signHttpBody('wrong-secret-0123456789', body)), 401)).toBe('The signature is missing, stale or not valid.');
    expect(await expectFailure(await post(providerIds.b!, {}), 401)).toBe('The signature is missing, stale or not valid.');
    // Signed by A, about an order only B had.
    expect(await expectFailure(await post(providerIds.a!, signHttpBody(SECRET_A, body)), 404)).toBe(`No order sent to this provider with the reference "${utr}".`);
    // An unknown provider is refused as a bad signature is: provider ids cannot be found out from outside.
    expect(await expectFailure(await post(999999, signHttpBody(SECRET_B, body)), 401)).toBe('The signature is missing, stale or not valid.');
    // A late refusal of a completed order changes nothing.
    expect((await expectJson(await post(providerIds.b!, signHttpBody(SECRET_B, body)), 200)).message).toEqual({ reference: utr, outcome: 'refused', result: 'unchanged' });
    expect((await shown(utr)).status).toBe(1);
  });

  it('delivers through Digiflazz', async () => {
    const utr = await order(await routedService(['d', 'a']));
    const view = await settled(utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Digiflazz:completed']);
    expect(digiflazz.ledger.deliveryCounts.get(utr)).toBe(1);
    expect(digiflazz.ledger.deliveries.get(utr)?.customer_no).toBe('777');
  });

  it('hands an order that no status query settles to an operator, never to another provider', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'pending', completeAfterMs: 3_600_000 };
    const utr = await order(serviceId);
    await waitFor('the order to be pending at A', async () => (await shown(utr)).attempts[0]?.outcome === 'pending');
    // Each status query that finds it pending asks again after twice the delay (100 ms here, then 200, 400, …).
    await waitFor('a status query scheduled after a doubled delay', async () => {
      const [state] = await app.services.sql<{ step: number; queries: number }[]>`
        select o.routing_step as step, a.status_queries as queries from orders o join provider_attempts a on a.order_id = o.id where o.utr = ${utr}`;
      const job = await app.services.queues.routing.getJob(routingJobId(utr, state!.step));
      return state!.queries >= 2 && job?.opts.delay === 100 * 2 ** state!.queries;
    });
    // Settling time is over for this attempt (as if PROVIDER_SETTLE_HOURS had passed).
    await app.services.sql`update provider_attempts set created_at = now() - interval '25 hours' where order_id = (select id from orders where utr = ${utr})`;
    const view = await settled(utr);
    expect(view.status).toBe(0);
    expect(view.awaiting_operator_since).not.toBeNull();
    expect(view.note).toContain('has not settled');
    expect(supplierB.ledger.has(utr)).toBe(false);
  });
});

describe('what the protocol says, and only that', () => {
  it("a status query answered with a 404 page (a proxy's, a moved URL) settles nothing: never the next route", async () => {
    const serviceId = await routedService(['a', 'b']);
    // A delivers and loses its answer; its status page is gone behind a proxy that says 404 in HTML.
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'dropAfterDelivering', statusMode: 'html404' };
    const utr = await order(serviceId);
    await waitFor('status queries answered by the 404 page', async () => (supplierA.statusQueryTimes.get(utr)?.length ?? 0) >= 3);
    const view = await shown(utr);
    expect(view).toMatchObject({ status: 0, delivery: 'with_supplier' });
    expect(view.attempts[0]).toMatchObject({ outcome: 'unknown', detail: 'HTTP 404 (unreadable body)' });
    expect(supplierB.ledger.has(utr)).toBe(false);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'dropAfterDelivering' };
    expect(outcomes(await settled(utr))).toEqual(['Supplier A:completed']);
    expect(supplierA.ledger.get(utr)?.deliveries).toBe(1);
  });

  it('an attempt keeps asking the address it was sent to: a base_url changed meanwhile applies to new attempts only', async () => {
    // A's new address is a server that never had the order: asked there, it would say 404 {"status":"not_found"}.
    const moved = await startHttpSupplier({ secret: SECRET_A });
    const provider = await addProvider({ name: `Moving ${Date.now()}`, kind: 'http', base_url: supplierA.url, credentials: { secret: SECRET_A } });
    try {
      const topUp = await createTopUp(app.services.db, { name: 'Game', services: [{ name: 'Game 6.00', price: '6.00' }] });
      const serviceId = topUp.services[0]!.id;
      await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, [{ provider_id: provider, product_code: `m-${serviceId}` }, { provider_id: providerIds.b, product_code: `b-${serviceId}` }]), 200);
      supplierA.behaviour.products[`m-${serviceId}`] = { mode: 'pending', completeAfterMs: 1500 };
      const utr = await order(serviceId);
      await waitFor('the order pending at the first address', async () => (await shown(utr)).attempts[0]?.outcome === 'pending');
      await expectJson(await admin('PATCH', `/providers/${provider}`, { base_url: moved.url }), 200);
      const view = await settled(utr);
      expect(outcomes(view)).toEqual([`${view.attempts[0].provider}:completed`]);
      expect(view.attempts[0].base_url).toBe(supplierA.url);
      expect(moved.statusQueries).toBe(0);
      expect(supplierA.ledger.get(utr)?.deliveries).toBe(1);
      expect(supplierB.ledger.has(utr)).toBe(false);
      // A new order goes to the new address.
      const next = await order(serviceId);
      await settled(next);
      expect(moved.ledger.get(next)?.deliveries).toBe(1);
    } finally {
      await moved.close();
    }
  });

  it('a callback starts no second chain of status queries: one chain per attempt, its delays doubling', async () => {
    const serviceId = await routedService(['a', 'b']);
    // A holds it pending, then refuses it and says so by callback: the order goes on to B, which holds it pending.
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'pending', completeAfterMs: 250, pendingThen: 'refuse', callbackUrl: `${app.baseUrl}/callbacks/providers/${providerIds.a}` };
    supplierB.behaviour.products[`b-${serviceId}`] = { mode: 'pending', completeAfterMs: 3_600_000 };
    const utr = await order(serviceId);
    await waitFor('the order pending at B', async () => (await shown(utr)).attempts[1]?.outcome === 'pending');
    const sentToB = Date.now();
    await sleep(3_000);
    // One chain from 100 ms doubling: queries at about 0.1, 0.3, 0.7 and 1.5 s (3.1 s is past the window). Each
    // chain started beside it would add as many again.
    const times = (supplierB.statusQueryTimes.get(utr) ?? []).filter((at) => at >= sentToB && at < sentToB + 3_000);
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(times.length).toBeLessThanOrEqual(5);
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(150);
  });
});

describe('an order keeps its fields in the form\'s order', () => {
  it("Digiflazz's customer_no is the text fields in the form's order, selects left out; or the route's destination", async () => {
    const topUp = await createTopUp(app.services.db, {
      name: 'Mobile Legends',
      orderFields: [
        { field_value: 'Region', field_name: 'region', field_placeholder: '', field_note: '', field_type: 'select', option: { sea: 'SEA', eu: 'EU' } },
        { field_value: 'User ID', field_name: 'user_id', field_placeholder: '', field_note: '', field_type: 'text' },
        { field_value: 'Zone ID', field_name: 'zone_id', field_placeholder: '', field_note: '', field_type: 'text' },
      ],
      services: [{ name: '86 diamonds', price: '6.00' }, { name: '172 diamonds', price: '12.00' }],
    });
    const [plain, templated] = topUp.services.map((s) => s.id) as [number, number];
    await expectJson(await admin('PUT', `/top-up-services/${plain}/routes`, [{ provider_id: providerIds.d, product_code: 'ml86' }]), 200);
    await expectJson(await admin('PUT', `/top-up-services/${templated}/routes`, [{ provider_id: providerIds.d, product_code: 'ml172', destination: '{zone_id}.{user_id}' }]), 200);
    const { api } = await buyer(app, '100.00');
    const place = async (serviceId: number) =>
      /T[0-9A-Z]+/.exec((await expectJson(await api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(serviceId), region: 'sea', user_id: '12345678', zone_id: '1234' }), 200)).message)![0];
    const first = await place(plain);
    const second = await place(templated);
    for (const utr of [first, second]) expect((await settled(utr)).status).toBe(1);
    expect(digiflazz.ledger.deliveries.get(first)?.customer_no).toBe('123456781234');
    expect(digiflazz.ledger.deliveries.get(second)?.customer_no).toBe('1234.12345678');
    // The order shows its fields as the form has them.
    expect((await shown(first)).fields).toEqual([
      { name: 'region', label: 'Region', type: 'select', value: 'sea' },
      { name: 'user_id', label: 'User ID', type: 'text', value: '12345678' },
      { name: 'zone_id', label: 'Zone ID', type: 'text', value: '1234' },
    ]);
  });
});

describe('changes by operators', () => {
  it('take effect at once: a disabled provider is skipped, new routes are followed', async () => {
    const serviceId = await routedService(['a', 'b']);
    await expectJson(await admin('PATCH', `/providers/${providerIds.a}`, { status: 'disabled' }), 200);
    try {
      expect(outcomes(await settled(await order(serviceId)))).toEqual(['Supplier B:completed']);
    } finally {
      await expectJson(await admin('PATCH', `/providers/${providerIds.a}`, { status: 'active' }), 200);
    }
    await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, [{ provider_id: providerIds.d, product_code: `d-${serviceId}`, cost: '4.00' }]), 200);
    expect(outcomes(await settled(await order(serviceId)))).toEqual(['Digiflazz:completed']);
  });
});

describe('recovery', () => {
  it('runs the routing again for an order whose fulfilment job finished without reading it', async () => {
    const serviceId = await routedService(['a', 'b']);
    const [service] = await app.services.sql<{ top_up_id: number }[]>`select top_up_id from top_up_services where id = ${serviceId}`;
    const placed = await createOrder(app.services.db, { accountId, topUpId: service!.top_up_id, serviceId, unitPrice: '6.00' });
    // The job under the order's utr reads no order (as when it ran before the order's transaction was visible) and completes.
    await app.services.queues.fulfilment.add('fulfil', { orderId: 2_000_000_000, utr: placed.utr }, { jobId: placed.utr });
    const view = await settled(placed.utr);
    expect(view.status).toBe(1);
    expect(outcomes(view)).toEqual(['Supplier A:completed']);
  });
});

describe('circuit breaker', () => {
  it('opens after consecutive unknown outcomes: every process skips the provider for new orders, then probes it', async () => {
    const serviceId = await routedService(['a', 'b']);
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'down' };
    const first = await Promise.all([order(serviceId), order(serviceId), order(serviceId)]);
    await waitFor('the circuit of A to open', async () => {
      const list = (await expectJson(await admin('GET', '/providers'), 200)).message as Json[];
      return list.find((p) => p.id === providerIds.a)?.circuit === 'open';
    });
    const listedA = ((await expectJson(await admin('GET', '/providers'), 200)).message as Json[]).find((p) => p.id === providerIds.a)!;
    expect(listedA.last_error).toMatch(/^send: /);
    expect(listedA.last_error_at).not.toBeNull();
    const metrics = await app.scrape();
    expect(metrics).toMatch(/^provider_circuit_open\{provider="Supplier A"\} 1$/m);
    expect(metrics).toMatch(/^provider_requests_total\{provider="Supplier A",request="send",outcome="unknown"\} [3-9]/m);
    // A new order skips A while its circuit is open.
    const skipping = await order(serviceId);
    const view = await settled(skipping);
    expect(outcomes(view)).toEqual(['Supplier B:completed']);
    // The first orders, whose sends A never received, move on once A answers again: never delivered twice.
    supplierA.behaviour.products[`a-${serviceId}`] = { mode: 'deliver' };
    for (const utr of first) {
      const settledView = await settled(utr);
      expect(settledView.status).toBe(1);
      expect((supplierA.ledger.get(utr)?.deliveries ?? 0) + (supplierB.ledger.get(utr)?.deliveries ?? 0)).toBe(1);
    }
    // Once the open period is over, a new order probes A again, and A takes it.
    await waitFor('the circuit of A to close', async () => {
      const list = (await expectJson(await admin('GET', '/providers'), 200)).message as Json[];
      return list.find((p) => p.id === providerIds.a)?.circuit === 'closed';
    });
    const probe = await order(serviceId);
    expect(outcomes(await settled(probe))).toEqual(['Supplier A:completed']);
  });
});

describe('margin report', () => {
  it('sums sales, cost and margin per provider and service over delivered orders', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const report = (await expectJson(await admin('GET', `/reports/margin?from=${from}&to=${to}`), 200)).message;
    const [delivered] = await app.services.sql`
      select count(*)::int as n, coalesce(sum(o.total), 0)::text as sales, coalesce(sum(a.cost), 0)::text as cost
      from provider_attempts a join orders o on o.id = a.order_id where a.outcome = 'completed' and o.status = 1`;
    expect(report.total.orders).toBe(delivered!.n);
    expect(report.total.sales).toBe(Number(delivered!.sales).toFixed(2));
    expect(report.total.cost).toBe(Number(delivered!.cost).toFixed(2));
    expect(Number(report.total.margin)).toBeCloseTo(Number(delivered!.sales) - Number(delivered!.cost), 2);
    const a = report.providers.find((p: Json) => p.provider === 'Supplier A');
    expect(a).toMatchObject({ provider_id: providerIds.a });
    expect(await expectFailure(await admin('GET', `/reports/margin?from=${to}&to=${from}`), 422)).toEqual(['The to field must be after from.']);
  });
});

describe('provider balances', () => {
  const alerts = async () =>
    (await app.services.sql<{ data: Json }[]>`select data from webhook_events where type = 'provider.balance_low' and account_id is null order by id`).map((row) => row.data);

  it('are read by the workers\' timer by themselves', async () => {
    const list = await waitFor('the timer to read the balances', async () => {
      const providers = (await expectJson(await admin('GET', '/providers'), 200)).message as Json[];
      return providers.every((p) => p.balance_checked_at !== null) && providers;
    });
    expect(list.find((p) => p.id === providerIds.d)!.balance).toBe(digiflazz.deposit().toFixed(2));
  });

  it('reads each balance and raises provider.balance_low once per crossing of the threshold', async () => {
    const { db, config, logger } = app.services;
    await expectJson(await admin('PATCH', `/providers/${providerIds.b}`, { balance_low_threshold: '5000.00' }), 200);
    await checkBalances(db, config.codeEncryptionKey, logger);
    await checkBalances(db, config.codeEncryptionKey, logger);
    expect(await alerts()).toEqual([{ provider_id: providerIds.b, name: 'Supplier B', balance: supplierB.balance, threshold: '5000.00' }]);
    const listed = ((await expectJson(await admin('GET', '/providers'), 200)).message as Json[]).find((p) => p.id === providerIds.b)!;
    expect(listed.balance).toBe(supplierB.balance);
    expect(listed.balance_checked_at).not.toBeNull();
    // Back above the threshold clears it; the next fall alerts again.
    await expectJson(await admin('PATCH', `/providers/${providerIds.b}`, { balance_low_threshold: '1.00' }), 200);
    await checkBalances(db, config.codeEncryptionKey, logger);
    expect(await alerts()).toHaveLength(1);
    await expectJson(await admin('PATCH', `/providers/${providerIds.b}`, { balance_low_threshold: '5000.00' }), 200);
    await checkBalances(db, config.codeEncryptionKey, logger);
    expect(await alerts()).toHaveLength(2);
    await expectJson(await admin('PATCH', `/providers/${providerIds.b}`, { balance_low_threshold: null }), 200);
  });
});
