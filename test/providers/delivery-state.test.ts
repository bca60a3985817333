/**
 * The delivery state machine of a top-up (src/modules/order-state/delivery.ts): its table, and that every move locks the
 * order and reads its delivery after the lock, so two moves of one order never interleave (an operator's refund and a
 * worker's new attempt, say); and that a sender held up past its timeout after recording an attempt never sends.
 */
import { sql } from 'drizzle-orm';
import type { Tx } from '../../src/db/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canMove, DELIVERY_MOVES, handToOperator, lockDelivery, openAttempt, type DeliveryState } from '../../src/modules/order-state/delivery.js';
import { refundOrder } from '../../src/modules/fulfilment/refunds.js';
import { adminOf, createTestAccount, expectJson, type Json } from '../helpers/api.js';
import { createOrder, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { waitFor } from '../helpers/system.js';

const SECRET_A = 'held-up-a-secret-0123456789';
const SECRET_B = 'held-up-b-secret-0123456789';

let app: TestApp;
let supplierA: HttpSupplier;
let supplierB: HttpSupplier;
let accountId: number;
const providerIds = { a: 0, b: 0 };

const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

beforeAll(async () => {
  supplierA = await startHttpSupplier({ secret: SECRET_A });
  supplierB = await startHttpSupplier({ secret: SECRET_B });
  app = await startTestApp({ workers: true, workerOptions: { settleBaseMs: 100, reconciler: { intervalMs: 500, staleAfterMs: 1000 } } });
  providerIds.a = (await expectJson(await admin('POST', '/providers', { name: 'A', kind: 'http', base_url: supplierA.url, credentials: { secret: SECRET_A }, timeout_ms: 300 }), 200)).message.id;
  providerIds.b = (await expectJson(await admin('POST', '/providers', { name: 'B', kind: 'http', base_url: supplierB.url, credentials: { secret: SECRET_B } }), 200)).message.id;
  accountId = (await createTestAccount(app, '0.00')).id;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([supplierA?.close(), supplierB?.close()]);
});

async function topUpOrder(routes: Array<'a' | 'b'> = []) {
  const topUp = await createTopUp(app.services.db, { services: [{ price: '6.00' }] });
  const serviceId = topUp.services[0]!.id;
  if (routes.length) {
    await expectJson(await admin('PUT', `/top-up-services/${serviceId}/routes`, routes.map((name) => ({ provider_id: providerIds[name], product_code: `${name}-${serviceId}` }))), 200);
  }
  return createOrder(app.services.db, { accountId, topUpId: topUp.id, serviceId, unitPrice: '6.00' });
}

describe('the table', () => {
  it('names every state a move starts from and leads to, and nothing leaves delivered or refunded', () => {
    const states: DeliveryState[] = ['routing', 'with_supplier', 'supplier_overdue', 'with_operator', 'delivered', 'refunded'];
    for (const [move, { from, to }] of Object.entries(DELIVERY_MOVES)) {
      expect(states, move).toContain(to);
      for (const state of from) expect(states, move).toContain(state);
      expect(from, move).not.toContain('delivered');
      expect(from, move).not.toContain('refunded');
    }
    // An open attempt leaves only by its settlement (or, never sent, by being withdrawn).
    const leaving = Object.entries(DELIVERY_MOVES).filter(([, m]) => (m.from as readonly string[]).includes('with_supplier')).map(([name]) => name);
    expect(leaving.sort()).toEqual(['attempt_completed', 'attempt_refused', 'overdue', 'withdraw']);
    expect(canMove({ state: 'with_supplier' }, 'refund')).toBe(false);
    expect(canMove({ state: 'supplier_overdue' }, 'complete')).toBe(false);
    expect(canMove({ state: 'with_operator' }, 'send')).toBe(false);
  });
});

/**
 * Runs `move` in a transaction that holds the order's lock (as a move does) while `beside` starts; `move` makes its
 * write only after `beside` had 200 ms to get past it, then commits. What `beside` did is returned.
 */
async function besideAMove<T>(orderId: number, move: (tx: Tx) => Promise<unknown>, beside: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const hasLock = new Promise<void>((resolve) => (locked = resolve));
  const moving = app.services.db.transaction(async (tx) => {
    await lockDelivery(tx, { id: orderId });
    locked();
    await held;
    await move(tx);
  });
  await hasLock;
  const result = beside();
  await new Promise((resolve) => setTimeout(resolve, 200));
  release();
  await moving;
  return result;
}

describe('every move locks the order and reads its delivery after the lock', () => {
  it('a new attempt waits for a refund under way, then finds the order refunded and records nothing', async () => {
    const order = await topUpOrder();
    const attempt = await besideAMove(
      order.id,
      (tx) => tx.execute(sql`update orders set status = 2, refunded_amount = total, updated_at = now() where id = ${order.id}`),
      () => openAttempt(app.services.db, order.id, 0, { provider_id: providerIds.a, product_code: 'X', cost: null, base_url: supplierA.url, destination: null, timeout_ms: 300 }),
    );
    expect(attempt).toBeNull();
    expect((await app.services.sql`select count(*)::int as n from provider_attempts where order_id = ${order.id}`)[0]!.n).toBe(0);
  });

  it('a send by a job whose step is not the order\'s any more records nothing: that step\'s own job sends', async () => {
    const order = await topUpOrder();
    await app.services.sql`update orders set routing_step = 2 where id = ${order.id}`;
    const route = { provider_id: providerIds.a, product_code: 'X', cost: null, base_url: supplierA.url, destination: null, timeout_ms: 300 };
    expect(await openAttempt(app.services.db, order.id, 1, route)).toBeNull();
    expect(await openAttempt(app.services.db, order.id, 2, route)).toMatchObject({ id: expect.any(Number) });
  });

  it('a hand-over waits for an attempt being recorded, then finds the order with its supplier and hands nothing over', async () => {
    const order = await topUpOrder();
    const [handed, refused] = await besideAMove(
      order.id,
      (tx) => tx.execute(sql`insert into provider_attempts (order_id, provider_id, product_code, base_url) values (${order.id}, ${providerIds.a}, 'X', ${supplierA.url})`),
      async () =>
        Promise.all([
          handToOperator(app.services.db, order.id, 'hand_over', 'no route'),
          refundOrder(app.services.db, order.utr, 'operator refund').catch((err: Error) => err.message),
        ]),
    );
    expect(handed).toBe(false);
    expect(refused).toMatch(/^The order has open attempt \d+ with provider "A" \(sent \d\d:\d\d:\d\d\); settle it first\.$/);
    expect((await app.services.sql`select status, awaiting_operator_since from orders where id = ${order.id}`)[0]).toEqual({ status: 0, awaiting_operator_since: null });
  });
});

describe('a sender held up after recording its attempt', () => {
  it('does not send once the timeout is past: the attempt is refused unsent, and the order goes to its next route', async () => {
    // Recording an attempt takes longer than A's timeout (300 ms), as a paused or overloaded worker would.
    await app.services.sql.unsafe(`
      create function test_slow_attempt() returns trigger language plpgsql as $$ begin perform pg_sleep(0.5); return new; end $$;
      create trigger test_slow_attempt before insert on provider_attempts for each row
        when (new.provider_id = ${providerIds.a}) execute function test_slow_attempt();`);
    try {
      const order = await topUpOrder(['a', 'b']);
      await app.services.queues.fulfilment.add('fulfil', { orderId: order.id, utr: order.utr }, { jobId: order.utr });
      const view: Json = await waitFor('the order to complete', async () => {
        const shown = (await expectJson(await admin('GET', `/orders/${order.utr}`), 200)).message;
        return shown.status === 1 && shown;
      });
      expect(view.attempts.map((a: Json) => `${a.provider}:${a.outcome}`)).toEqual(['A:refused', 'B:completed']);
      expect(view.attempts[0].detail).toBe('not sent: the sender was held up past the timeout after recording the attempt');
      expect(supplierA.ledger.has(order.utr)).toBe(false);
      expect(supplierB.ledger.get(order.utr)?.deliveries).toBe(1);
    } finally {
      await app.services.sql.unsafe('drop trigger test_slow_attempt on provider_attempts; drop function test_slow_attempt();');
    }
  });
});
