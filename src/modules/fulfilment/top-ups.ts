/**
 * An operator's moves of a top-up order (C13, C22): complete it by hand, or settle its supplier's open attempt. Both
 * go through the delivery state machine (order-state/delivery.ts): neither is allowed while an attempt may still deliver,
 * except the settlement of that very attempt.
 */
import type { Db, DbOrTx } from '../../db/client.js';
import { AppError } from '../../core/errors.js';
import { ensureMove, lockDelivery, settleAttempt } from '../order-state/delivery.js';
import { statusChange, unobserved, type StatusObserver } from '../order-state/events.js';
import { ORDER_STATUS, transitionOrder, type OrderStatus } from '../order-state/state.js';

/** An operator marks a top-up order delivered (initiate → completed); `observe` hears of it once committed. */
export async function completeTopUpOrder(
  db: DbOrTx,
  utr: string,
  note?: string,
  observe: StatusObserver = unobserved,
): Promise<{ utr: string; status: OrderStatus }> {
  const change = await db.transaction(async (tx) => {
    const delivery = await lockDelivery(tx, { utr });
    if (delivery.kind !== 'top_up') throw new AppError('invalid_transition', 'Only top-up orders are completed by an operator; card orders complete when their codes are assigned.');
    ensureMove(delivery, 'complete');
    const moved = await transitionOrder(tx, delivery.id, ORDER_STATUS.completed, note === undefined ? {} : { note });
    if (!moved) throw new AppError('invalid_transition');
    return statusChange(moved);
  });
  observe(change);
  return { utr, status: change.to };
}

export type OperatorSettlement = { outcome: 'completed' | 'refused'; reason: string };

/**
 * An operator settles a top-up's open attempt with what the provider said outside the protocol (C22 amended): recorded
 * with the time and the reason, and the order moves as the provider's answer would move it: completed, or on to its
 * next route (refunded when none is left) through a routing job scheduled once committed.
 */
export async function settleAttemptForOperator(
  { db, observe = unobserved, scheduleStep }: { db: Db; observe?: StatusObserver; scheduleStep: (order: { id: number; utr: string }, step: number, delayMs: number) => Promise<void> },
  utr: string,
  attemptId: number,
  { outcome, reason }: OperatorSettlement,
): Promise<{ utr: string; attempt_id: number; outcome: OperatorSettlement['outcome']; status: OrderStatus }> {
  const settled = await settleAttempt(db, attemptId, outcome === 'completed' ? { outcome } : { outcome, reason: `settled by an operator: ${reason}` }, {
    by: 'operator',
    utr,
    reason,
  });
  if (settled.change) observe(settled.change);
  if (settled.step !== null) await scheduleStep({ id: settled.orderId, utr }, settled.step, 0);
  return { utr, attempt_id: attemptId, outcome, status: settled.change?.to ?? ORDER_STATUS.initiate };
}
