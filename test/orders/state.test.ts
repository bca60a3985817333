import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { client, createTestAccount, expectJson, tokenFor } from '../helpers/api.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { unitPriceCents, type PriceFields } from '../../src/modules/campaigns/pricing.js';
import { toCents } from '../../src/lib/money.js';
import { unitPriceSql } from '../../src/modules/orders/service.js';
import { canTransition, ORDER_STATUS, STATUS_LABELS, transitionOrder, type OrderStatus } from '../../src/modules/order-state/state.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('order state table (C8)', () => {
  it('allows exactly 0 → 1|2|3 and 3 → 1|2', () => {
    const all = [0, 1, 2, 3] as OrderStatus[];
    const allowed = all.flatMap((from) => all.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`));
    expect(allowed).toEqual(['0→1', '0→2', '0→3', '3→1', '3→2']);
    expect(STATUS_LABELS).toEqual({ 0: 'initiate', 1: 'completed', 2: 'refund', 3: 'stock_short' });
  });

  it('moves an order once and refuses moves the table does not allow, also on retries', async () => {
    const keys = await createTestAccount(app);
    const api = client(app, await tokenFor(app, keys));
    const card = await createCard(app.services.db);
    const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    const [order] = await app.services.sql`select id from orders where utr = ${placed.message.utr}`;
    const id = Number(order!.id);

    const short = await transitionOrder(app.services.db, id, ORDER_STATUS.stock_short);
    expect(short).toMatchObject({ id, status: 3, completedAt: null });
    expect(await transitionOrder(app.services.db, id, ORDER_STATUS.stock_short)).toBeNull();
    const done = await transitionOrder(app.services.db, id, ORDER_STATUS.completed, { note: 'restocked' });
    expect(done).toMatchObject({ id, status: 1 });
    expect(done!.completedAt).not.toBeNull();
    expect(await transitionOrder(app.services.db, id, ORDER_STATUS.completed)).toBeNull();
    expect(await transitionOrder(app.services.db, id, ORDER_STATUS.refund, { refundedAmount: '10.00' })).toBeNull();
    expect(await transitionOrder(app.services.db, id, ORDER_STATUS.initiate)).toBeNull();
    const [row] = await app.services.sql`select status, note, refunded_amount from orders where id = ${id}`;
    expect(row).toEqual({ status: 1, note: 'restocked', refunded_amount: '0.00' });
  });
});

describe('placement pricing in SQL', () => {
  it('agrees with campaigns/pricing.ts (C6) to the cent', async () => {
    const cases: PriceFields[] = [
      { price: '10.00', discount: '0', discountType: 'flat' },
      { price: '10.00', discount: '2.50', discountType: 'flat' },
      { price: '3.00', discount: '5.00', discountType: 'flat' },
      { price: '19.99', discount: '15', discountType: 'percentage' },
      { price: '0.05', discount: '50', discountType: 'percentage' },
      { price: '0.15', discount: '50', discountType: 'percentage' },
      { price: '99.99', discount: '33.33', discountType: 'percentage' },
      { price: '12.34', discount: '150', discountType: 'percentage' },
    ];
    for (const c of cases) {
      const [row] = await app.services.db.execute<{ unit: string }>(
        sql`select ${unitPriceSql('p.price', 'p.discount', 'p.discount_type')}::text as unit
            from (select ${c.price}::numeric as price, ${c.discount}::numeric as discount, ${c.discountType}::text as discount_type) p`,
      );
      expect(toCents(row!.unit), JSON.stringify(c)).toBe(unitPriceCents(c));
    }
  });
});
