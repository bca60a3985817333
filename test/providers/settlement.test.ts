/**
 * C22 as amended: an open attempt blocks the operator. While a supplier may still deliver a top-up, an operator can
 * neither refund it nor complete it by hand (409, naming the provider and when it was sent); they settle the attempt
 * first (`POST /admin/orders/:utr/attempts/:id/settle`), recorded with who, when and why, and the order then moves as
 * the provider's answer would. Real workers, PostgreSQL and Redis, local suppliers that keep their own ledgers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHttpBody } from '../../src/modules/suppliers/adapters/http.js';
import { adminOf, createTestAccount, expectFailure, expectJson, type Json } from '../helpers/api.js';
import { createOrder, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { waitFor } from '../helpers/system.js';

const SECRET_A = 'settle-a-secret-0123456789';
const SECRET_B = 'settle-b-secret-0123456789';

let app: TestApp;
let supplierA: HttpSupplier;
let supplierB: HttpSupplier;
const providerIds: Record<'a' | 'b', number> = { a: 0, b: 0 };
let accountId: number;

const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

beforeAll(async () => {
  // A holds every order pending for an hour: only an operator, or its callback, settles it.
  supplierA = await startHttpSupplier({ secret: SECRET_A, behaviour: { mode: 'pending', completeAfterMs: 3_600_000 } });
  supplierB = await startHttpSupplier({ secret: SECRET_B });
  app = await startTestApp({ workers: true, workerOptions: { settleBaseMs: 100, reconciler: { intervalMs: 500, staleAfterMs: 1000 } } });
  for (const [key, supplier, secret] of [['a', supplierA, SECRET_A], ['b', supplierB, SECRET_B]] as const) {
    providerIds[key] = (await expectJson(await admin('POST', '/providers', { name: `Supplier ${key.toUpperCase()}`, kind: 'http', base_url: supplier.url, credentials: { secret } }), 200)).message.id;
  }
  accountId = (await createTestAccount(app, '0.00')).id;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([supplierA?.close(), supplierB?.close()]);
});

/** An accepted order of a new service routed to `routes`, handed to the fulfilment queue; waits until A holds it pending. */
async function pendingAtA(routes: Array<'a' | 'b'> = ['a', 'b']) {
  const topUp = await createTopUp(app.services.db, { services: [{ price: '6.00' }] });
  const serviceId = topUp.services[0]!.id;
  await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, routes.map((name) => ({ provider_id: providerIds[name], product_code: `${name}-${serviceId}`, cost: '4.00' }))), 200);
  const placed = await createOrder(app.services.db, { accountId, topUpId: topUp.id, serviceId, unitPrice: '6.00', informations: { 'Player id': '777' } });
  await app.services.queues.fulfilment.add('fulfil', { orderId: placed.id, utr: placed.utr }, { jobId: placed.utr });
  const view = await waitFor(`order ${placed.utr} pending at A`, async () => {
    const shown = await view_(placed.utr);
    return shown.attempts[0]?.outcome === 'pending' && shown;
  });
  return { utr: placed.utr, attemptId: view.attempts[0].id as number, startedAt: view.attempts[0].started_at as string };
}

const view_ = async (utr: string): Promise<Json> => (await expectJson(await admin('GET', `/orders/${utr}`), 200)).message;

const settled = (utr: string) =>
  waitFor(`order ${utr} to settle`, async () => {
    const view = await view_(utr);
    return (view.status !== 0 || view.awaiting_operator_since !== null) && view;
  });

/**
 * What a refused operator move must leave as it was: the order, its attempts, the account's balance and ledger (not the
 * status queries the workers go on making meanwhile: their count and routing step).
 */
const writes = async (utr: string) => ({
  order: await app.services.sql`select status, refunded_amount, note, awaiting_operator_since, completed_at from orders where utr = ${utr}`,
  attempts: await app.services.sql`
    select id, outcome, settled_at, settled_by, settle_reason, provider_reference from provider_attempts
    where order_id = (select id from orders where utr = ${utr}) order by id`,
  account: await app.services.sql`select balance from accounts where id = ${accountId}`,
  ledger: await app.services.sql`select count(*)::int as n from balance_ledger where account_id = ${accountId}`,
  events: await app.services.sql`select count(*)::int as n from webhook_events where data->>'utr' = ${utr}`,
});

/** `12:04:31`: the UTC time of day an attempt was sent, as the refusal names it. */
const timeOfDay = (iso: string) => iso.slice(11, 19);

describe('an open attempt blocks the operator', () => {
  it('refund and completion are refused while A may still deliver, naming A and when it was sent; nothing is written', async () => {
    const { utr, attemptId, startedAt } = await pendingAtA();
    const before = await writes(utr);
    const message = `The order has open attempt ${attemptId} with provider "Supplier A" (sent ${timeOfDay(startedAt)}); settle it first.`;
    expect(await expectFailure(await admin('POST', `/orders/${utr}/refund`, { reason: 'customer asked' }), 409)).toBe(message);
    expect(await expectFailure(await admin('POST', `/orders/${utr}/complete`, { note: 'credited by hand' }), 409)).toBe(message);
    expect(await writes(utr)).toEqual(before);
    expect((await view_(utr)).delivery).toBe('with_supplier');

    // A then delivers and says so: the order is delivered once, and was never refunded. The callback goes before A's
    // ledger says completed: the workers' status queries (every 100 ms here) would otherwise find it first, and the
    // callback would then find the order already moved.
    const entry = supplierA.ledger.get(utr)!;
    const body = JSON.stringify({ reference: utr, status: 'completed', provider_reference: entry.providerReference });
    const callback = await app.request(`/callbacks/providers/${providerIds.a}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...signHttpBody(SECRET_A, body) }, body });
    entry.status = 'completed';
    entry.deliveries += 1;
    expect((await expectJson(callback, 200)).message).toEqual({ reference: utr, outcome: 'completed', result: 'applied' });
    const view = await view_(utr);
    expect(view).toMatchObject({ status: 1, refunded_amount: '0.00', delivery: 'delivered' });
    expect(supplierB.ledger.has(utr)).toBe(false);
  });

  it('settled as refused: recorded with who, when and why; the order goes on to its next route', async () => {
    const { utr, attemptId } = await pendingAtA();
    const answer = await admin('POST', `/orders/${utr}/attempts/${attemptId}/settle`, { outcome: 'refused', reason: 'A says it never got it' });
    expect((await expectJson(answer, 200)).message).toEqual({ utr, attempt_id: attemptId, outcome: 'refused', status: 0 });
    const view = await settled(utr);
    expect(view).toMatchObject({ status: 1, delivery: 'delivered' });
    expect(view.attempts.map((a: Json) => `${a.provider}:${a.outcome}`)).toEqual(['Supplier A:refused', 'Supplier B:completed']);
    expect(view.attempts[0]).toMatchObject({ settled_by: 'operator', settle_reason: 'A says it never got it', settled_at: expect.any(String) });
    expect(view.attempts[1]).toMatchObject({ settled_by: 'provider', settle_reason: null });
    expect(supplierB.ledger.get(utr)?.deliveries).toBe(1);
  });

  it('settled as completed: the order completes with the reason as its note, and a later answer from A changes nothing', async () => {
    const { utr, attemptId } = await pendingAtA();
    const answer = await admin('POST', `/orders/${utr}/attempts/${attemptId}/settle`, { outcome: 'completed', reason: 'A confirmed delivery by phone' });
    expect((await expectJson(answer, 200)).message).toEqual({ utr, attempt_id: attemptId, outcome: 'completed', status: 1 });
    expect(await view_(utr)).toMatchObject({ status: 1, note: 'A confirmed delivery by phone', delivery: 'delivered' });
    const events = await app.services.sql`select type from webhook_events where data->>'utr' = ${utr}`;
    const body = JSON.stringify({ reference: utr, status: 'refused', reason: 'late and wrong' });
    const late = await app.request(`/callbacks/providers/${providerIds.a}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...signHttpBody(SECRET_A, body) }, body });
    expect((await expectJson(late, 200)).message.result).toBe('unchanged');
    expect(await app.services.sql`select type from webhook_events where data->>'utr' = ${utr}`).toEqual(events);
    expect(supplierB.ledger.has(utr)).toBe(false);
  });

  it('the only route refused by a settlement: the order is refunded, once', async () => {
    const { utr, attemptId } = await pendingAtA(['a']);
    await expectJson(await admin('POST', `/orders/${utr}/attempts/${attemptId}/settle`, { outcome: 'refused', reason: 'out of stock at A' }), 200);
    const view = await settled(utr);
    expect(view).toMatchObject({ status: 2, refunded_amount: '6.00', delivery: 'refunded' });
    const [refunds] = await app.services.sql`
      select count(*)::int as n from balance_ledger where kind = 'order_refund' and order_id = (select id from orders where utr = ${utr})`;
    expect(refunds!.n).toBe(1);
  });

  it('an attempt still open after PROVIDER_SETTLE_HOURS waits for an operator, who still settles it before anything else', async () => {
    const { utr, attemptId } = await pendingAtA();
    await app.services.sql`update provider_attempts set created_at = now() - interval '25 hours' where id = ${attemptId}`;
    const view = await waitFor('the attempt to be overdue', async () => {
      const shown = await view_(utr);
      return shown.delivery === 'supplier_overdue' && shown;
    });
    expect(view.note).toContain('Supplier A has not settled the order in 24 h');
    expect(await expectFailure(await admin('POST', `/orders/${utr}/refund`, { reason: 'too slow' }), 409)).toMatch(new RegExp(`^The order has open attempt ${attemptId} with provider "Supplier A" \\(sent \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\); settle it first\\.$`));
    await expectJson(await admin('POST', `/orders/${utr}/attempts/${attemptId}/settle`, { outcome: 'refused', reason: 'A gave up on it' }), 200);
    const done = await settled(utr);
    expect(done).toMatchObject({ status: 1, awaiting_operator_since: null });
    expect(supplierB.ledger.get(utr)?.deliveries).toBe(1);
  });
});

describe('a request that may still be on its way', () => {
  it('is not settled as refused until the provider\'s timeout (and a grace) has passed since it was recorded; as completed, at once', async () => {
    // An attempt recorded moments ago, still `sending` with a 60 s timeout: its request may still reach A.
    const topUp = await createTopUp(app.services.db, { services: [{ price: '6.00' }] });
    const order = await createOrder(app.services.db, { accountId, topUpId: topUp.id, serviceId: topUp.services[0]!.id, unitPrice: '6.00' });
    const [attempt] = await app.services.sql<{ id: number; started: string }[]>`
      insert into provider_attempts (order_id, provider_id, product_code, base_url, timeout_ms)
      values (${order.id}, ${providerIds.a}, 'X', ${supplierA.url}, 60000)
      returning id::float8 as id, created_at::text as started`;
    const before = await writes(order.utr);
    const refused = await admin('POST', `/orders/${order.utr}/attempts/${attempt!.id}/settle`, { outcome: 'refused', reason: 'A has no such order' });
    expect(await expectFailure(refused, 409)).toMatch(
      new RegExp(`^The request of attempt ${attempt!.id} may still be on its way to "Supplier A" \\(sent \\d\\d:\\d\\d:\\d\\d\\); settle it as refused in (6[0-5]|5\\d) s, or as completed now\\.$`),
    );
    expect(await writes(order.utr)).toEqual(before);
    await expectJson(await admin('POST', `/orders/${order.utr}/attempts/${attempt!.id}/settle`, { outcome: 'completed', reason: 'A delivered it' }), 200);
    expect((await view_(order.utr)).status).toBe(1);
  });
});

describe('what a settlement refuses (nothing written)', () => {
  it('an unknown attempt, one of another order, a settled one, a bad body, an unknown order', async () => {
    const first = await pendingAtA();
    const second = await pendingAtA();
    const before = await writes(first.utr);
    const settle = (utr: string, id: number | string, body: unknown) => admin('POST', `/orders/${utr}/attempts/${id}/settle`, body);
    const body = { outcome: 'refused', reason: 'x' };
    expect(await expectFailure(await settle(first.utr, 999_999, body), 404)).toBe(`No provider attempt of order ${first.utr} with id 999999.`);
    expect(await expectFailure(await settle(first.utr, second.attemptId, body), 404)).toBe(`No provider attempt of order ${first.utr} with id ${second.attemptId}.`);
    expect(await expectFailure(await settle(first.utr, 'abc', body), 404)).toBe('No provider attempt with id "abc".');
    expect(await expectFailure(await settle('T0000NOSUCHORDER', first.attemptId, body), 404)).toBe(`No provider attempt of order T0000NOSUCHORDER with id ${first.attemptId}.`);
    expect(await expectFailure(await settle(first.utr, first.attemptId, {}), 422)).toEqual(['The outcome field is required.', 'The reason field is required.']);
    expect(await expectFailure(await settle(first.utr, first.attemptId, { outcome: 'lost', reason: '  ' }), 422)).toEqual([
      'The outcome field must be completed or refused.',
      'The reason field is required.',
    ]);
    expect(await writes(first.utr)).toEqual(before);

    await expectJson(await settle(first.utr, first.attemptId, { outcome: 'completed', reason: 'delivered' }), 200);
    const after = await writes(first.utr);
    expect(await expectFailure(await settle(first.utr, first.attemptId, body), 409)).toBe(`Attempt ${first.attemptId} is settled already (completed).`);
    expect(await writes(first.utr)).toEqual(after);
  });
});

describe('the margin report', () => {
  it('counts no refunded order, even one whose attempt completed (as an earlier version let an operator leave it)', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const report = async () => (await expectJson(await admin('GET', `/reports/margin?from=${from}&to=${to}`), 200)).message.total;
    const before = await report();
    const topUp = await createTopUp(app.services.db, { services: [{ price: '9.00' }] });
    const order = await createOrder(app.services.db, { accountId, topUpId: topUp.id, serviceId: topUp.services[0]!.id, unitPrice: '9.00', status: 2 });
    await app.services.sql`
      insert into provider_attempts (order_id, provider_id, product_code, cost, outcome, settled_at, base_url)
      values (${order.id}, ${providerIds.a}, 'X', 5.00, 'completed', now(), ${supplierA.url})`;
    expect(await report()).toEqual(before);
  });
});
