import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { orders, type OrderStatusCode } from '../../db/schema.js';
import { fromCents, toCents } from '../../lib/money.js';

/** C8 order statuses as stored in `orders.status`: the only place that knows their numbers. */
export const ORDER_STATUS = { initiate: 0, completed: 1, refund: 2, stock_short: 3 } as const satisfies Record<string, OrderStatusCode>;
export type OrderStatusLabel = keyof typeof ORDER_STATUS;
export type OrderStatus = OrderStatusCode;

export const STATUS_LABELS: Record<OrderStatus, OrderStatusLabel> = {
  0: 'initiate',
  1: 'completed',
  2: 'refund',
  3: 'stock_short',
};

/** The only moves an order may make; completed and refund are terminal. */
export const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  0: [ORDER_STATUS.completed, ORDER_STATUS.refund, ORDER_STATUS.stock_short],
  1: [],
  2: [],
  3: [ORDER_STATUS.completed, ORDER_STATUS.refund],
};

export const canTransition = (from: OrderStatus, to: OrderStatus): boolean => TRANSITIONS[from].includes(to);

/** Statuses from which an order may move to `to` (for conditions in SQL). */
export const sourcesOf = (to: OrderStatus): OrderStatus[] =>
  (Object.keys(TRANSITIONS).map(Number) as OrderStatus[]).filter((from) => canTransition(from, to));

/** A status from its label or its number as text (`stock_short`, `3`), case aside; undefined for anything else. */
export function parseStatus(text: string): OrderStatus | undefined {
  const name = text.trim().toLowerCase();
  if (Object.hasOwn(ORDER_STATUS, name)) return ORDER_STATUS[name as OrderStatusLabel];
  return (Object.values(ORDER_STATUS) as number[]).includes(Number(name)) && /^\d$/.test(name) ? (Number(name) as OrderStatus) : undefined;
}

export type TransitionedOrder = {
  id: number;
  utr: string;
  accountId: number;
  kind: string;
  status: OrderStatus;
  total: string;
  refundedAmount: string;
  updatedAt: string;
  completedAt: string | null;
};

/**
 * Moves an order to `to` in one conditional UPDATE, so concurrent or retried callers cannot
 * skip the table: the row is returned when it moved, null when its current status does not allow the move.
 * Every status change of an order goes through here.
 */
export async function transitionOrder(
  db: DbOrTx,
  orderId: number,
  to: OrderStatus,
  extra: { note?: string; refundedAmount?: string } = {},
): Promise<TransitionedOrder | null> {
  const from = sourcesOf(to);
  if (from.length === 0) return null;
  const rows = await db
    .update(orders)
    .set({
      status: to,
      updatedAt: sql`now()`,
      ...(to === ORDER_STATUS.completed ? { completedAt: sql`now()` } : {}),
      ...(extra.note !== undefined ? { note: extra.note } : {}),
      ...(extra.refundedAmount !== undefined ? { refundedAmount: fromCents(toCents(extra.refundedAmount)) } : {}),
    })
    .where(sql`${orders.id} = ${orderId} and ${orders.status} in (${sql.join(from.map((s) => sql`${s}`), sql`, `)})`)
    .returning({
      id: orders.id,
      utr: orders.utr,
      accountId: orders.accountId,
      kind: orders.kind,
      status: orders.status,
      total: orders.total,
      refundedAmount: orders.refundedAmount,
      updatedAt: orders.updatedAt,
      completedAt: orders.completedAt,
    });
  return rows[0] ?? null;
}
