import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import type { OwnedStamps } from '../../lib/change-stamps.js';
import { STATUS_LABELS, type OrderStatus, type TransitionedOrder } from './state.js';

/**
 * One committed change of an order: its status move (what its log line and counter say), or codes given to a card order
 * that stays `stock_short` (`from` = `to`: no move to log or count, but its entry in the order list changed).
 */
export type StatusChange = { utr: string; accountId: number; kind: string; from: OrderStatus; to: OrderStatus; mode: OrderMode };

/** C25: a live order, or one placed with a test key; every metric and log line of an order says which. */
export type OrderMode = 'live' | 'test';

export const modeOf = (livemode: boolean): OrderMode => (livemode ? 'live' : 'test');

/**
 * Told of each status change once its transaction has committed (a rolled-back move is never reported).
 * Functions that move orders take one; callers that log and count pass `statusObserver(...)`.
 */
export type StatusObserver = (change: StatusChange) => void;

/** For callers that neither log nor count (tools, tests). */
export const unobserved: StatusObserver = () => {};

/** The change a `transitionOrder` result made (the row carries the status it moved from). */
export const statusChange = (moved: Pick<TransitionedOrder, 'utr' | 'accountId' | 'kind' | 'status' | 'previousStatus' | 'livemode'>): StatusChange => ({
  utr: moved.utr,
  accountId: moved.accountId,
  kind: moved.kind,
  from: moved.previousStatus,
  to: moved.status,
  mode: modeOf(moved.livemode),
});

/**
 * One info line (utr, kind, mode, from, to) and one `order_status_changes_total` count per status move, and the
 * account's order pages marked changed: the stamp's drop is sent at once, ahead of the caller's answer on a connected
 * Redis (and a stopping process waits for it), so the client's next read shows the change. Pass the logger of the
 * request or job that moved the order, so the line carries its request id.
 */
export const statusObserver =
  ({ logger, metrics, orderPages }: { logger: Logger; metrics: Pick<Metrics, 'orderStatusChanged'>; orderPages: Pick<OwnedStamps, 'changed'> }): StatusObserver =>
  ({ utr, accountId, kind, from, to, mode }) => {
    void orderPages.changed([accountId]);
    if (from === to) return;
    metrics.orderStatusChanged(kind, STATUS_LABELS[to], mode);
    logger.info({ utr, kind, mode, from: STATUS_LABELS[from], to: STATUS_LABELS[to] }, 'order status changed');
  };
