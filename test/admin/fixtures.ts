import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/client.js';
import { fromCents, toCents } from '../../src/lib/money.js';
import { cards, cardServices, categories, orderLines, orders, topUps, topUpServices, type OrderStatusCode } from '../../src/db/schema.js';

/** Catalog rows and orders written straight to the database, so operator tests need no buyer flow. */
const image = { image: 'x.png', image_driver: 'local', preview: 'x.png', preview_driver: 'local' };
const slug = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

export async function insertCardService(db: Db, price = '10.00', name = 'Card'): Promise<{ cardId: number; serviceId: number }> {
  const [category] = await db.insert(categories).values({ name: 'Cards', icon: 'i', type: 'card' }).returning();
  const [card] = await db.insert(cards).values({ categoryId: category!.id, name, slug: slug('card'), image }).returning();
  const [service] = await db.insert(cardServices).values({ cardId: card!.id, name: `${name} ${price}`, price }).returning();
  return { cardId: card!.id, serviceId: service!.id };
}

export async function insertTopUpService(db: Db, price = '5.00', name = 'Game'): Promise<{ topUpId: number; serviceId: number }> {
  const [category] = await db.insert(categories).values({ name: 'Top-ups', icon: 'i', type: 'top_up' }).returning();
  const [topUp] = await db.insert(topUps).values({ categoryId: category!.id, name, slug: slug('top-up'), image }).returning();
  const [service] = await db.insert(topUpServices).values({ topUpId: topUp!.id, name: `${name} ${price}`, price }).returning();
  return { topUpId: topUp!.id, serviceId: service!.id };
}

type OrderSpec = {
  accountId: number;
  status?: OrderStatusCode;
  quantity?: number;
  unitPrice?: string;
  informations?: Record<string, string>;
} & ({ kind: 'card'; cardId: number; cardServiceId: number; codesOwed?: number } | { kind: 'top_up'; topUpId: number; topUpServiceId: number });

/** An accepted order (already paid) with one line. */
export async function insertOrder(db: Db, spec: OrderSpec): Promise<{ id: number; utr: string }> {
  const quantity = spec.quantity ?? 1;
  const unit = spec.unitPrice ?? '10.00';
  const total = fromCents(toCents(unit) * quantity);
  const utr = `T${randomBytes(8).toString('hex').toUpperCase()}`;
  const [order] = await db
    .insert(orders)
    .values({
      utr,
      accountId: spec.accountId,
      kind: spec.kind,
      topUpId: spec.kind === 'top_up' ? spec.topUpId : null,
      status: spec.status ?? 0,
      total,
      currency: 'USD',
      currencySymbol: '$',
      informations: spec.kind === 'top_up' ? (spec.informations ?? { 'Player id': '12345' }) : null,
    })
    .returning();
  await db.insert(orderLines).values({
    orderId: order!.id,
    quantity,
    basePrice: unit,
    discount: '0',
    unitPrice: unit,
    lineTotal: total,
    ...(spec.kind === 'card'
      ? { cardServiceId: spec.cardServiceId, cardId: spec.cardId, codesOwed: spec.codesOwed ?? 0 }
      : { topUpServiceId: spec.topUpServiceId }),
  });
  return { id: order!.id, utr };
}

/** An accepted top-up order (already paid) of a new top-up service priced at the order's unit price. */
export async function insertTopUpOrder(
  db: Db,
  spec: Omit<Extract<OrderSpec, { kind: 'top_up' }>, 'kind' | 'topUpId' | 'topUpServiceId'>,
): Promise<{ id: number; utr: string; topUpId: number; serviceId: number }> {
  const top = await insertTopUpService(db, spec.unitPrice ?? '10.00');
  const order = await insertOrder(db, { ...spec, kind: 'top_up', topUpId: top.topUpId, topUpServiceId: top.serviceId });
  return { ...order, ...top };
}
