/** Helpers shared by the worker tests: placing orders over HTTP and reading their state from PostgreSQL. */
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { DbOrTx } from '../../src/db/client.js';
import { addCodes } from '../../src/modules/inventory/service.js';
import { utrOfTopUpOrder, type StoreClient } from '@topup-store/client';
import { client, createTestAccount, storeClientFor, tokenFor } from '../helpers/api.js';
import type { TestApp } from '../helpers/harness.js';
import { waitFor } from '../helpers/system.js';

export { waitFor };

/** A buyer as a reseller's code is one (`store`: the TypeScript client) and as raw HTTP (`api`: one bearer token). */
export type Buyer = { accountId: number; api: ReturnType<typeof client>; store: StoreClient };

export async function createBuyer(app: TestApp, balance = '1000.00'): Promise<Buyer> {
  const account = await createTestAccount(app, balance);
  return { accountId: account.id, api: client(app, await tokenFor(app, account)), store: storeClientFor(app, account) };
}

/** Places a card order through the client (under an Idempotency-Key of its own) and returns its utr. */
export async function placeCardOrder(buyer: Buyer, lines: Array<[serviceId: number, quantity: number]>): Promise<string> {
  const { data } = await buyer.store.POST('/api/card/make-order', {
    body: { service_ids: lines.map(([id]) => id), quantities: lines.map(([, quantity]) => quantity) },
  });
  return data.message.utr;
}

/** Orders a top-up's first service through the client and returns its utr. */
export async function placeTopUpOrder(buyer: Buyer, topUp: { id: number; services: Array<{ id: number }> }): Promise<string> {
  const { data } = await buyer.store.POST('/api/top-up/make-order', { body: { topUpId: topUp.id, serviceId: topUp.services[0]!.id } });
  return utrOfTopUpOrder(data.message);
}

export async function stockCodes(app: TestApp, serviceId: number, count: number, label = 'CODE'): Promise<string[]> {
  const codes = Array.from({ length: count }, (_, i) => `${label}-${serviceId}-${i}-${Math.random().toString(36).slice(2, 8)}`);
  const { added } = await addCodes(app.services.db, app.services.config.codeEncryptionKey, serviceId, codes);
  expect(added).toBe(count);
  return codes;
}

export type OrderState = {
  id: number;
  status: number;
  total: string;
  refunded_amount: string;
  note: string | null;
  lines: Array<{ id: number; card_service_id: number | null; quantity: number; codes_owed: number; assigned: number }>;
};

/** An order with its lines and how many codes each line holds. */
export async function orderState(db: DbOrTx, utr: string): Promise<OrderState> {
  const [order] = await db.execute<Omit<OrderState, 'lines'>>(
    sql`select id::float8 as id, status, total, refunded_amount, note from orders where utr = ${utr}`,
  );
  if (!order) throw new Error(`no order ${utr}`);
  const lines = await db.execute<OrderState['lines'][number]>(sql`
    select l.id::float8 as id, l.card_service_id, l.quantity, l.codes_owed,
           (select count(*)::int from card_codes c where c.order_line_id = l.id) as assigned
    from order_lines l where l.order_id = ${order.id} order by l.id`);
  return { ...order, lines: [...lines] };
}

export const waitForStatus = (app: TestApp, utr: string, status: number) =>
  waitFor(`order ${utr} to reach status ${status}`, async () => {
    const state = await orderState(app.services.db, utr);
    return state.status === status && state;
  });

/** Invariant 3: the balance equals the sum of its ledger, and every order has at most one refund. */
export async function expectLedgerConsistent(db: DbOrTx, accountId: number): Promise<string> {
  const [row] = await db.execute<{ balance: string; ledger: string; max_refunds: number }>(sql`
    select a.balance,
           (select coalesce(sum(amount), 0)::numeric(14, 2)::text from balance_ledger where account_id = a.id) as ledger,
           (select coalesce(max(n), 0)::int from (select count(*) as n from balance_ledger
              where account_id = a.id and kind = 'order_refund' group by order_id) r) as max_refunds
    from accounts a where a.id = ${accountId}`);
  expect(row!.balance).toBe(row!.ledger);
  expect(row!.max_refunds).toBeLessThanOrEqual(1);
  return row!.balance;
}

export async function sellCount(db: DbOrTx, cardId: number): Promise<number> {
  // Sales not yet folded into the card row count too.
  const [row] = await db.execute<{ sold: number }>(sql`
    select sell_count + coalesce((select sum(sold) from card_sales where card_id = ${cardId}), 0)::int as sold
    from cards where id = ${cardId}`);
  return row!.sold;
}
