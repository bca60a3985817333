import { sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client.js';
import { retryingConflicts } from '../../db/conflicts.js';
import { accounts, balanceLedger, orderLines } from '../../db/schema.js';
import { AppError } from '../../core/errors.js';
import { fromCents, toCents } from '../../lib/money.js';
import { utcToday } from '../../lib/time.js';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import { applicableMembership } from '../campaigns/rule.js';
import { statusChange, unobserved, type StatusObserver } from '../order-state/events.js';
import { deliveryOf, ensureMove } from '../order-state/delivery.js';
import { ensureTransition, lockOrder, ORDER_STATUS, transitionOrder, type OrderStatus } from '../order-state/state.js';

type RefundLine = {
  card_service_id: number | null;
  top_up_service_id: number | null;
  quantity: number;
  codes_owed: number;
  unit_price: string;
  campaign_units: number;
  campaign_unit_price: string | null;
  campaign_id: number | null;
  line_total: string;
};

/**
 * What a line gives back: its undelivered units (top-up lines deliver nothing before completion).
 * Delivered units are counted as the campaign-priced units first, since an order takes its
 * campaign units first (C6); so the refund counts undelivered units at the regular unit price
 * first and at the campaign price last, and the campaign units not delivered are released.
 */
function undelivered(line: RefundLine, kind: string): { cents: number; campaignUnits: number } {
  const delivered = kind === 'card' ? line.quantity - line.codes_owed : 0;
  const deliveredCampaign = Math.min(delivered, line.campaign_units);
  const deliveredCents =
    deliveredCampaign * toCents(line.campaign_unit_price ?? line.unit_price) +
    (delivered - deliveredCampaign) * toCents(line.unit_price);
  return {
    cents: Math.max(0, toCents(line.line_total) - deliveredCents),
    campaignUnits: line.campaign_units - deliveredCampaign,
  };
}

/**
 * Gives unsold campaign units back to the service's allowance (C9), only while the line's campaign still
 * applies to the service (the one rule) and the service carries it; a service that left at its cap, or a
 * campaign that ended or was overtaken, keeps its final count.
 */
async function releaseCampaignUnits(tx: Tx, line: RefundLine, units: number, today: string): Promise<void> {
  if (units <= 0 || line.campaign_id === null) return;
  const kind = line.card_service_id !== null ? 'card' : 'top_up';
  const serviceId = line.card_service_id ?? line.top_up_service_id;
  const { service: services } = PRODUCT_KINDS[kind];
  await tx.execute(sql`
    update ${services} s set offered_sell = greatest(s.offered_sell - ${units}, 0), updated_at = now()
    where s.id = ${serviceId} and s.is_offered = 1 and s.campaign_id = ${line.campaign_id}
      and s.campaign_id = (select campaign_id from ${applicableMembership(kind, sql`s.id`, today)} m)`);
}

/**
 * Refunds a non-completed order (C8: initiate or stock_short → refund; a top-up only as its delivery allows, with no
 * supplier attempt open) in one transaction: credits
 * the undelivered value to the balance it was paid from (a test order's: the test balance) with an `order_refund` ledger row (at most one per order,
 * enforced by a unique index), releases unsold campaign units and clears what is still owed.
 * `observe` hears of the status change once the transaction has committed.
 */
export async function refundOrder(
  db: DbOrTx,
  utr: string,
  reason: string,
  observe: StatusObserver = unobserved,
): Promise<{ utr: string; status: OrderStatus; refunded_amount: string }> {
  const { refunded, change } = await retryingConflicts(() => db.transaction(async (tx) => {
    const order = await lockOrder(tx, { utr });
    // A top-up with an attempt that may still deliver is never refunded: its attempt is settled first.
    if (order.kind === 'top_up') ensureMove(await deliveryOf(tx, order), 'refund');
    ensureTransition(order.status, ORDER_STATUS.refund);
    const lines = await tx.execute<RefundLine>(sql`
      select card_service_id, top_up_service_id, quantity, codes_owed, unit_price, campaign_units,
             campaign_unit_price, campaign_id, line_total
      from ${orderLines} where order_id = ${order.id}
      order by card_service_id nulls last, top_up_service_id, id`);
    const today = utcToday();
    let cents = 0;
    for (const line of lines) {
      const back = undelivered(line, order.kind);
      cents += back.cents;
      // A test order reserved no campaign unit (C25): it has none to give back.
      if (order.livemode) await releaseCampaignUnits(tx, line, back.campaignUnits, today);
    }
    if (order.kind !== 'card') cents = toCents(order.total);
    const amount = fromCents(Math.min(cents, toCents(order.total)));

    if (toCents(amount) > 0) {
      // A test order's refund goes back to the test balance it was paid from (C25).
      const balance = order.livemode ? sql`balance` : sql`test_balance`;
      await tx.execute(sql`
        with moved as (
          update ${accounts} set ${balance} = ${balance} + ${amount}::numeric, updated_at = now()
          where id = ${order.account_id}
          returning id, ${balance} as balance, currency
        )
        insert into ${balanceLedger} (account_id, amount, balance_after, kind, currency, order_id, reason, livemode)
        select id, ${amount}::numeric, balance, 'order_refund', currency, ${order.id}, ${reason}, ${order.livemode} from moved`);
    }
    await tx.execute(sql`update ${orderLines} set codes_owed = 0 where order_id = ${order.id} and codes_owed > 0`);
    const moved = await transitionOrder(tx, order.id, ORDER_STATUS.refund, { refundedAmount: amount, note: reason });
    if (!moved) throw new AppError('invalid_transition');
    return { refunded: { utr, status: moved.status, refunded_amount: moved.refundedAmount }, change: statusChange(moved) };
  }));
  observe(change);
  return refunded;
}
