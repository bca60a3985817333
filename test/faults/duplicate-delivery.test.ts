import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCodes } from '../../src/modules/inventory/service.js';
import { QUEUE_NAMES } from '../../src/queues/index.js';
import { checkInvariants, NO_VIOLATIONS, violations } from '../helpers/invariants.js';
import { startHttpSupplier, type HttpSupplier } from '../helpers/suppliers/http-supplier.js';
import { openScene, placeOrders, settled, type Scene } from './support.js';

/**
 * Every job delivered more than once (BullMQ is at-least-once): each order's fulfilment job runs three
 * times over two workers, restocks run twice at once, and top-ups reach the provider (the TOPUP_PROVIDER=http one, a
 * local supplier that keeps its own ledger and refuses a send whose Idempotency-Key is not the order's utr) again.
 * Handlers are idempotent: codes are delivered once, money moves once, and each top-up is delivered once.
 */
const SECRET = 'duplicate-delivery-secret';
let scene: Scene;
let supplier: HttpSupplier;

beforeAll(async () => {
  supplier = await startHttpSupplier({ secret: SECRET });
  scene = await openScene({
    workers: 2,
    env: { TOPUP_PROVIDER: 'http', TOPUP_PROVIDER_URL: supplier.url, TOPUP_PROVIDER_SECRET: SECRET },
    store: { scarce: 30 },
  });
});
afterAll(async () => {
  await scene?.close();
  await supplier?.close();
});

describe('jobs delivered more than once', () => {
  it('change nothing the second time', async () => {
    const { cluster, store, db } = scene;
    const queue = scene.queue(QUEUE_NAMES.fulfilment);
    const restock = scene.queue(QUEUE_NAMES.restock);
    try {
      const { accepted } = await placeOrders(cluster, store, 200, 16);
      const orders = await db.sql<{ id: number; utr: string }[]>`select id::float8 as id, utr from orders where utr = any(${accepted})`;
      // Two more deliveries of every order's job, under other job ids, racing the first.
      await queue.addBulk(
        orders.flatMap((o) => [1, 2].map((n) => ({ name: 'fulfil', data: { orderId: o.id, utr: o.utr }, opts: { jobId: `${o.utr}-again-${n}` } }))),
      );
      await settled(db.sql);

      // Restock the scarce service, with its restock job delivered twice at once.
      await addCodes(db.db, scene.codeKey, store.cards.scarce, Array.from({ length: 400 }, (_, i) => `DUP-${i}-${Math.random()}`));
      await restock.addBulk([1, 2, 3].map((n) => ({ name: 'restock', data: { cardServiceId: store.cards.scarce }, opts: { jobId: `restock-twice-${n}` } })));
      await settled(db.sql);

      const report = await checkInvariants(db.sql, accepted);
      expect(violations(report), cluster.logs()).toEqual(NO_VIOLATIONS);
      expect(report.ordersByStatus.stock_short ?? 0).toBe(0);
      const topUps = await db.sql<{ utr: string; status: number }[]>`select utr, status from orders where kind = 'top_up'`;
      expect(topUps.length).toBeGreaterThan(0);
      for (const { utr, status } of topUps) {
        expect(status).toBe(1);
        expect(supplier.ledger.get(utr)?.deliveries).toBe(1);
      }
    } finally {
      await queue.close();
      await restock.close();
    }
  }, 180_000);
});
