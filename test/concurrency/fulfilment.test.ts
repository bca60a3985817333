import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCode } from '../../src/modules/inventory/codes.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  createBuyer,
  expectLedgerConsistent,
  placeCardOrder,
  sellCount,
  stockCodes,
  waitFor,
  type Buyer,
} from '../workers/support.js';

let app: TestApp;
let buyers: Buyer[];

beforeAll(async () => {
  app = await startTestApp({ workers: true });
  buyers = await Promise.all(Array.from({ length: 8 }, () => createBuyer(app, '5000.00')));
});
afterAll(() => app.close());

type Row = { utr: string; status: number; quantity: number; codes_owed: number; assigned: number; created_at: string };

async function ordersOf(serviceId: number): Promise<Row[]> {
  return app.services.db.execute<Row>(sql`
    select o.utr, o.status, l.quantity, l.codes_owed,
           (select count(*)::int from card_codes c where c.order_line_id = l.id) as assigned, o.created_at
    from orders o join order_lines l on l.order_id = o.id
    where l.card_service_id = ${serviceId}
    order by o.created_at, o.id`);
}

describe('card fulfilment under concurrency', () => {
  it('200 concurrent orders for 50 codes: each code delivered once, the rest waits, restock serves oldest first', async () => {
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    await stockCodes(app, serviceId, 50);

    const utrs = await Promise.all(
      Array.from({ length: 200 }, (_, i) => placeCardOrder(buyers[i % buyers.length]!, [[serviceId, 1 + (i % 2)]])),
    );
    expect(new Set(utrs).size).toBe(200);
    const settled = await waitFor(
      'every order to be fulfilled or short',
      async () => {
        const rows = await ordersOf(serviceId);
        return rows.length === 200 && rows.every((r) => r.status !== 0) && rows;
      },
      60_000,
    );

    // Exactly the 50 codes went out, each to one line, and every line adds up.
    const demand = settled.reduce((sum, r) => sum + r.quantity, 0);
    expect(demand).toBe(300);
    expect(settled.reduce((sum, r) => sum + r.assigned, 0)).toBe(50);
    for (const r of settled) {
      expect(r.assigned + r.codes_owed).toBe(r.quantity);
      expect(r.status).toBe(r.codes_owed === 0 ? 1 : 3);
    }
    const delivered = await app.services.db.execute<{ code_encrypted: Buffer }>(
      sql`select code_encrypted from card_codes where card_service_id = ${serviceId} and order_line_id is not null`,
    );
    const plain = delivered.map((r) => openCode(app.services.config.codeEncryptionKey, r.code_encrypted));
    expect(new Set(plain).size).toBe(50);
    expect(await sellCount(app.services.db, card.id)).toBe(50);

    // Restock just enough for the oldest waiting orders: exactly those complete.
    const waiting = settled.filter((r) => r.status === 3);
    const served = waiting.slice(0, 40);
    const needed = served.reduce((sum, r) => sum + r.codes_owed, 0);
    await stockCodes(app, serviceId, needed, 'RESTOCK');
    await app.services.queues.restock.add('restock', { cardServiceId: serviceId });
    const afterFirst = await waitFor('the oldest waiting orders to complete', async () => {
      const rows = await ordersOf(serviceId);
      const byUtr = new Map(rows.map((r) => [r.utr, r]));
      return served.every((r) => byUtr.get(r.utr)!.status === 1) && byUtr;
    });
    for (const r of waiting.slice(40)) expect(afterFirst.get(r.utr)).toMatchObject({ status: 3, codes_owed: r.codes_owed });

    // Then the rest.
    const remaining = waiting.slice(40).reduce((sum, r) => sum + r.codes_owed, 0);
    expect(remaining).toBe(demand - 50 - needed);
    await stockCodes(app, serviceId, remaining, 'LAST');
    await app.services.queues.restock.add('restock', { cardServiceId: serviceId });
    await waitFor('every order to complete', async () => (await ordersOf(serviceId)).every((r) => r.status === 1));

    const [codes] = await app.services.db.execute<{ assigned: number; lines: number; free: number }>(sql`
      select count(*) filter (where order_line_id is not null)::int as assigned,
             count(distinct order_line_id)::int as lines,
             count(*) filter (where order_line_id is null)::int as free
      from card_codes where card_service_id = ${serviceId}`);
    expect(codes).toEqual({ assigned: 300, lines: 200, free: 0 });
    expect(await sellCount(app.services.db, card.id)).toBe(300);
    for (const buyer of buyers) await expectLedgerConsistent(app.services.db, buyer.accountId);
  });
});
