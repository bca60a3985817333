import { sql } from 'drizzle-orm';
import { builtStatement, type DbOrTx, type Tx } from '../../db/client.js';
import type { OrderStatusCode, ProductKind, WebhookEventType } from '../../db/schema.js';
import { wantingEndpoints } from '../../db/outbox.js';
import { fromCents, toCents } from '../../lib/money.js';
import { AppError, notFound } from '../../core/errors.js';

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

/** How a refusal names a status: what the order is, and what it would be made. */
const STATUS_WORDS: Record<OrderStatus, { is: string; made: string }> = {
  0: { is: 'still in progress', made: 'put back in progress' },
  1: { is: 'completed', made: 'completed' },
  2: { is: 'refunded', made: 'refunded' },
  3: { is: 'waiting for stock', made: 'marked short of stock' },
};

/**
 * Refuses a move the table does not allow (409), saying why: `The order is already refunded.`, `A completed order
 * cannot be refunded.` Every operator move goes through it, so the messages are the same everywhere.
 */
export function ensureTransition(from: OrderStatus, to: OrderStatus): void {
  if (canTransition(from, to)) return;
  const message = from === to ? `The order is already ${STATUS_WORDS[from].is}.` : `The order is ${STATUS_WORDS[from].is} and cannot be ${STATUS_WORDS[to].made}.`;
  throw new AppError('invalid_transition', message);
}

/** Statuses from which an order may move to `to` (for conditions in SQL). */
export const sourcesOf = (to: OrderStatus): OrderStatus[] =>
  (Object.keys(TRANSITIONS).map(Number) as OrderStatus[]).filter((from) => canTransition(from, to));

/** A status from its label or its number as text (`stock_short`, `3`), case aside; undefined for anything else. */
export function parseStatus(text: string): OrderStatus | undefined {
  const name = text.trim().toLowerCase();
  if (Object.hasOwn(ORDER_STATUS, name)) return ORDER_STATUS[name as OrderStatusLabel];
  return (Object.values(ORDER_STATUS) as number[]).includes(Number(name)) && /^\d$/.test(name) ? (Number(name) as OrderStatus) : undefined;
}

/** An order locked for the rest of its transaction, as the moves of an order read it. */
export type LockedOrder = {
  id: number;
  utr: string;
  account_id: number;
  kind: ProductKind;
  status: OrderStatus;
  total: string;
  /** Top-ups: handed to an operator (C8), never sent by itself. */
  with_operator: boolean;
  /** Top-ups: the routing step whose job moves the order on (see order-state/delivery.ts). */
  routing_step: number;
  /** C25: false for a test order (paid from the test balance, fulfilled by the test rules). */
  livemode: boolean;
};

/**
 * Locks an order (by utr or id) for the rest of the transaction, so every move of it waits for the one before; an
 * unknown utr or id → not_found. (float8: raw SQL reads bigint as text.)
 */
export async function lockOrder(tx: Tx, order: { utr: string } | { id: number }): Promise<LockedOrder> {
  const where = 'utr' in order ? sql`utr = ${order.utr}` : sql`id = ${order.id}`;
  const [locked] = await tx.execute<LockedOrder>(sql`
    select id::float8 as id, utr, account_id, kind, status, total, awaiting_operator_since is not null as with_operator, routing_step, livemode
    from orders where ${where} for no key update`);
  if (!locked) throw 'utr' in order ? notFound('order', 'utr', order.utr) : notFound('order', 'id', order.id);
  return locked;
}

/** The client event each status change raises (C17); a move to a status without one raises none. */
export const EVENT_OF_STATUS: Partial<Record<OrderStatus, WebhookEventType>> = {
  [ORDER_STATUS.completed]: 'order.completed',
  [ORDER_STATUS.stock_short]: 'order.stock_short',
  [ORDER_STATUS.refund]: 'order.refunded',
};

export type TransitionedOrder = {
  id: number;
  utr: string;
  accountId: number;
  kind: ProductKind;
  status: OrderStatus;
  previousStatus: OrderStatus;
  total: string;
  refundedAmount: string;
  updatedAt: string;
  completedAt: string | null;
  /** C25: false for a test order. */
  livemode: boolean;
};

/**
 * Moves an order to `to` in one statement, so concurrent or retried callers cannot skip the table: the row
 * is returned when it moved, null when its current status does not allow the move. Every status change of
 * an order goes through here or through `transitionOrders`, which share one statement.
 */
export async function transitionOrder(
  db: DbOrTx,
  orderId: number,
  to: OrderStatus,
  extra: { note?: string; refundedAmount?: string } = {},
): Promise<TransitionedOrder | null> {
  const [moved] = await transitionOrders(db, [orderId], to, extra);
  return moved ?? null;
}

/**
 * Moves each of `orderIds` that the table lets go to `to`, in one statement whatever their number (a fulfilment
 * batch moves its orders together): the rows that moved, in id order; an order whose status does not allow the
 * move is left as it is and not returned. The orders are locked lowest id first, as every other multi-order
 * transaction locks them.
 *
 * The same statement writes each change's event to the outbox (and one delivery per endpoint of the
 * account that wants it), so no change is ever without its event and no event outlives a rolled-back
 * change. An account without endpoints costs one index probe and writes nothing.
 */
export async function transitionOrders(
  db: DbOrTx,
  orderIds: number[],
  to: OrderStatus,
  extra: { note?: string; refundedAmount?: string } = {},
): Promise<TransitionedOrder[]> {
  if (sourcesOf(to).length === 0 || orderIds.length === 0) return [];
  let statement = transitionStatements.get(to);
  if (!statement) transitionStatements.set(to, (statement = transitionStatement(to)));
  const refundedAmount = extra.refundedAmount === undefined ? null : fromCents(toCents(extra.refundedAmount));
  return statement(db, { orderIds, note: extra.note ?? null, refundedAmount });
}

/** The move to each status, its text built once (see builtStatement) when first needed. */
const transitionStatements = new Map<OrderStatus, ReturnType<typeof transitionStatement>>();

function transitionStatement(to: OrderStatus) {
  const event = EVENT_OF_STATUS[to] ?? null;
  return builtStatement<'orderIds' | 'note' | 'refundedAmount', TransitionedOrder>(
    (slot) => sql`
    with before as (
      -- Locking returns the rows as they are now, so previous_status is exact even under a concurrent move.
      select id, status from orders where id = any(${slot('orderIds')}::bigint[]) order by id for no key update
    ),
    moved as (
      -- A note or refunded amount not given (null) leaves the order's own.
      update orders set
        status = ${to},
        updated_at = now(),
        completed_at = ${to === ORDER_STATUS.completed ? sql`now()` : sql`orders.completed_at`},
        note = coalesce(${slot('note')}::text, orders.note),
        refunded_amount = coalesce(${slot('refundedAmount')}::numeric, orders.refunded_amount)
      from before
      where orders.id = before.id
        and orders.status in (${sql.join(sourcesOf(to).map((s) => sql`${s}`), sql`, `)})
      returning orders.id, orders.utr, orders.account_id, orders.kind, orders.status, before.status as previous_status,
        orders.total, orders.currency, orders.rate, orders.refunded_amount, orders.updated_at, orders.completed_at, orders.livemode
    ),
    wanting as (
      -- Read once per order: whether to write its event, and where to deliver it.
      select moved.id as order_id, endpoint.id from moved
      join lateral (${wantingEndpoints(sql`moved.account_id`, sql`${event}::text`, sql`moved.livemode`)}) endpoint on true
      where ${event}::text is not null
    ),
    event as (
      insert into webhook_events (type, account_id, data)
      select ${event}, moved.account_id, jsonb_build_object(
          'utr', moved.utr, 'kind', moved.kind, 'status', moved.status, 'status_label', ${STATUS_LABELS[to]}::text,
          'previous_status', moved.previous_status, 'price', moved.total, 'currency', moved.currency)
        -- C24: the rate of an order in another currency than the store's.
        || case when moved.rate is null then '{}'::jsonb else jsonb_build_object('rate', moved.rate::text) end
        -- C25: a test order's events say so (and go to test endpoints only).
        || case when moved.livemode then '{}'::jsonb else '{"livemode": false}'::jsonb end
      from moved
      where exists (select 1 from wanting where wanting.order_id = moved.id)
      returning id, data->>'utr' as utr
    ),
    deliveries as (
      insert into webhook_deliveries (event_id, endpoint_id)
      select event.id, wanting.id from event join moved on moved.utr = event.utr join wanting on wanting.order_id = moved.id
    )
    select id::float8 as id, utr, account_id as "accountId", kind, status, previous_status as "previousStatus", total,
      refunded_amount as "refundedAmount", updated_at as "updatedAt", completed_at as "completedAt", livemode
    from moved
    order by id
  `,
  );
}
