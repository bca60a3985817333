/**
 * The chaos run of the top-up suppliers (C22): 2,000 top-up orders from many accounts over three providers, two
 * speaking the store's `http` protocol and one Digiflazz's, while one fails mid-run (5xx for everything new) and
 * another loses its answers after delivering, the Digiflazz one answers late by signed callbacks (each sent twice),
 * and one service's routes all refuse. The suppliers keep their own ledgers of what they delivered; the run ends
 * with those ledgers checked against the database: no order delivered by two providers, none delivered twice,
 * none delivered and refunded, and every order completed, refunded or with an operator (DESIGN §2 over the whole
 * database besides).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopUp } from '../helpers/fixtures.js';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { sleep } from '../helpers/processes.js';
import { startDigiflazzServer, type DigiflazzServer } from '../helpers/suppliers/digiflazz-server.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { openScene, settled, type Scene } from './support.js';

const ORDERS = 2000;
const CLIENTS = 16;

let scene: Scene;
let failing: HttpSupplier;
let losing: HttpSupplier;
let digiflazz: DigiflazzServer;

beforeAll(async () => {
  failing = await startHttpSupplier({ secret: 'failing-supplier-secret-0123' });
  losing = await startHttpSupplier({ secret: 'losing-supplier-secret-01234' });
  // Enough deposit for every order (a deposit that runs out is a refusal, rc 44, which fails over like any other).
  digiflazz = await startDigiflazzServer({ deposit: 1_000_000_000 });
  scene = await openScene({ workers: 2, env: { PROVIDER_CIRCUIT_FAILURES: '5', PROVIDER_CIRCUIT_OPEN_SECONDS: '2' }, store: { buyers: 24 } });
});
afterAll(async () => {
  await scene?.close();
  await Promise.all([failing?.close(), losing?.close(), digiflazz?.close()]);
});

async function admin(method: string, path: string, body: unknown) {
  const response = await fetch(`${scene.cluster.baseUrl}/admin${path}`, {
    method,
    headers: { Authorization: `Bearer ${scene.cluster.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return (JSON.parse(text) as { message: { id: number } }).message;
}

/** Places `count` top-up orders from every buyer, over `services`, each client sending again after a 503 or no answer. */
async function placeTopUps(topUpId: number, services: number[], count: number, onProgress: (placed: number) => void) {
  const accepted: string[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = async (i: number) => {
    const headers = { Authorization: scene.store.tokens[i % scene.store.tokens.length]!, 'Content-Type': 'application/json', 'Idempotency-Key': `chaos-${i}` };
    const body = JSON.stringify({ topUpId, serviceId: services[i % services.length], player_id: `p${i}` });
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const response = await fetch(`${scene.cluster.baseUrl}/api/top-up/make-order`, { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
        const text = await response.text();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        if (response.status === 200) {
          const utr = /order number is (\w+)/.exec((JSON.parse(text) as { message: string }).message)?.[1];
          if (utr) accepted.push(utr);
        }
        if (response.status !== 503) return;
      } catch {
        // no answer: sent again with the same key
      }
      await sleep(200);
    }
  };
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        const i = next++;
        await one(i);
        onProgress(i + 1);
      }
    }),
  );
  return { accepted, statuses };
}

describe('top-up suppliers under chaos', () => {
  it('never delivers an order twice, by two providers, or delivered and refunded; every order settles', async () => {
    const ids = {
      failing: (await admin('POST', '/providers', { name: 'Failing', kind: 'http', base_url: failing.url, credentials: { secret: 'failing-supplier-secret-0123' }, timeout_ms: 1000 })).id,
      losing: (await admin('POST', '/providers', { name: 'Losing', kind: 'http', base_url: losing.url, credentials: { secret: 'losing-supplier-secret-01234' }, timeout_ms: 1000 })).id,
      digiflazz: (await admin('POST', '/providers', { name: 'Digiflazz', kind: 'digiflazz', base_url: digiflazz.url, credentials: digiflazz.credentials, timeout_ms: 1000 })).id,
    };
    // Four services of one top-up: each provider first for one of them, and one whose every route refuses.
    const topUp = await createTopUp(scene.db.db, {
      orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
      services: [{ price: '6.00' }, { price: '7.00' }, { price: '8.00' }, { price: '9.00' }],
    });
    const [s1, s2, s3, refused] = topUp.services.map((s) => s.id) as [number, number, number, number];
    const route = (provider: keyof typeof ids, serviceId: number) => ({ provider_id: ids[provider], product_code: `${provider}-${serviceId}`, cost: '5.00' });
    await admin('PUT', `/top-up-services/${s1}/routes`, [route('failing', s1), route('losing', s1), route('digiflazz', s1)]);
    await admin('PUT', `/top-up-services/${s2}/routes`, [route('losing', s2), route('digiflazz', s2), route('failing', s2)]);
    await admin('PUT', `/top-up-services/${s3}/routes`, [route('digiflazz', s3), route('failing', s3), route('losing', s3)]);
    await admin('PUT', `/top-up-services/${refused}/routes`, [route('failing', refused), route('losing', refused)]);
    failing.behaviour.products[`failing-${refused}`] = { mode: 'refuse' };
    losing.behaviour.products[`losing-${refused}`] = { mode: 'refuse', refuseStatus: 409 };
    digiflazz.behaviour.callbackUrl = `${scene.cluster.baseUrl}/callbacks/providers/${ids.digiflazz}`;
    digiflazz.behaviour.callbackTwice = true;
    digiflazz.behaviour.completeAfterMs = 300;

    // The faults, by how far the run has got.
    const faults = (placed: number) => {
      if (placed === Math.round(ORDERS * 0.25)) failing.behaviour.mode = 'error500';
      if (placed === Math.round(ORDERS * 0.4)) losing.behaviour.mode = 'dropAfterDelivering';
      if (placed === Math.round(ORDERS * 0.5)) digiflazz.behaviour.mode = 'pending';
      if (placed === Math.round(ORDERS * 0.75)) losing.behaviour.mode = 'deliver';
    };
    const started = Date.now();
    // Every tenth order is of the service whose routes all refuse.
    const services = [s1, s2, s3, s1, s2, s3, s1, s2, s3, refused];
    const { accepted, statuses } = await placeTopUps(topUp.id, services, ORDERS, faults);
    expect(accepted.length, JSON.stringify(statuses)).toBe(ORDERS);
    await settled(scene.db.sql, 240_000, () => scene.cluster.logs().slice(-4000));

    const orders = await scene.db.sql<{ utr: string; status: number; with_operator: boolean; completed_by: number | null }[]>`
      select o.utr, o.status, o.awaiting_operator_since is not null as with_operator,
             (select a.provider_id from provider_attempts a where a.order_id = o.id and a.outcome = 'completed') as completed_by
      from orders o where o.kind = 'top_up'`;
    const delivered = (utr: string) => ({
      [ids.failing]: failing.ledger.get(utr)?.deliveries ?? 0,
      [ids.losing]: losing.ledger.get(utr)?.deliveries ?? 0,
      [ids.digiflazz]: digiflazz.ledger.deliveryCounts.get(utr) ?? 0,
    });
    const tally = { completed: 0, refunded: 0, withOperator: 0, deliveredByTwo: 0, deliveredTwice: 0, deliveredAndRefunded: 0, completedWithoutDelivery: 0, deliveredNotCompleted: 0 };
    for (const order of orders) {
      const counts = Object.entries(delivered(order.utr)).filter(([, n]) => n > 0);
      const total = counts.reduce((sum, [, n]) => sum + n, 0);
      if (counts.length > 1) tally.deliveredByTwo += 1;
      if (counts.some(([, n]) => n > 1)) tally.deliveredTwice += 1;
      if (order.status === 2) {
        tally.refunded += 1;
        if (total > 0) tally.deliveredAndRefunded += 1;
      } else if (order.status === 1) {
        tally.completed += 1;
        // The provider the database says delivered it is the one whose ledger has it.
        if (counts.length !== 1 || Number(counts[0]![0]) !== order.completed_by) tally.completedWithoutDelivery += 1;
      } else if (order.with_operator) {
        tally.withOperator += 1;
      }
      if (order.status !== 1 && !order.with_operator && total > 0) tally.deliveredNotCompleted += 1;
    }
    const invariants = await checkInvariants(scene.db.sql, accepted);
    const attempts = await scene.db.sql<{ provider: string; outcome: string; detail: string | null; n: number }[]>`
      select p.name as provider, a.outcome, left(a.detail, 60) as detail, count(*)::int as n
      from provider_attempts a join providers p on p.id = a.provider_id group by 1, 2, 3 order by 1, 2, 3`;
    console.log(`attempts by provider and outcome:\n${attempts.map((a) => `  ${a.provider} ${a.outcome} ${a.detail ?? ''}: ${a.n}`).join('\n')}`);
    console.log(
      `top-up chaos: ${ORDERS} orders in ${((Date.now() - started) / 1000).toFixed(1)} s: ${tally.completed} completed, ${tally.refunded} refunded, ` +
        `${tally.withOperator} with an operator; delivered by two providers ${tally.deliveredByTwo}, twice ${tally.deliveredTwice}, ` +
        `delivered and refunded ${tally.deliveredAndRefunded}; ledgers: failing ${failing.deliveries}, losing ${losing.deliveries}, ` +
        `digiflazz ${[...digiflazz.ledger.deliveryCounts.values()].reduce((a, b) => a + b, 0)}`,
    );
    expect(tally).toMatchObject({ deliveredByTwo: 0, deliveredTwice: 0, deliveredAndRefunded: 0, completedWithoutDelivery: 0, deliveredNotCompleted: 0 });
    expect(tally.completed + tally.refunded + tally.withOperator).toBe(ORDERS);
    // The service whose routes all refuse: every one of its orders refunded.
    expect(tally.refunded).toBe(ORDERS / 10);
    expect(violations(invariants)).toEqual(NO_VIOLATIONS);
    // The faults did happen: the failing provider answered 5xx, the losing one lost answers, callbacks came in twice.
    expect(failing.received).toBeGreaterThan(0);
    expect(digiflazz.sentCallbacks.length).toBeGreaterThan(0);
  });
});
