/**
 * The test rules of C25: how an order placed with a test key is fulfilled. The same jobs, the same state machine and
 * the same outbox as a live order, so an integration sees every status and every webhook it will see live; but it
 * never takes a code from stock and never reaches a supplier:
 * - a card line gets generated codes `TEST-XXXX-XXXX-XXXX`, except that a line of quantity 13 gets one, the order waits
 *   `stock_short`, and gets the rest 30 s later (a restock);
 * - a top-up settles by the last four digits of its first order field: `0000` is refused (refunded), `1111` waits 30 s
 *   and then completes, anything else completes at once.
 * A later move (the restock, the pending top-up's completion) is the job of the order's next routing step, counted in
 * PostgreSQL like a supplier's status query, so it runs once whatever retries happen. Its job is added before the step
 * commits: it is delayed 30 s, far past the commit, and a job that cannot be added rolls the step back, so the step's
 * own job runs again rather than leaving the order waiting for a job that never comes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import type { OrderFieldValue } from '../../db/schema.js';
import { sealCode } from '../inventory/codes.js';
import { nextRoutingStep } from '../order-state/delivery.js';
import { statusChange, type StatusChange, type StatusObserver } from '../order-state/events.js';
import { lockOrder, ORDER_STATUS, transitionOrder, type LockedOrder } from '../order-state/state.js';
import { refundOrder } from './refunds.js';
import { fieldsOf } from './top-up-routing.js';

/** A test card line of this quantity waits `stock_short` with one code (C25). */
export const TEST_SHORT_QUANTITY = 13;

/** How long a test order waits before its restock or its pending top-up's completion (C25). */
export const TEST_WAIT_MS = 30_000;

/** What the test rules did with an order: its status now, or nothing (not a test order, or nothing left to do). */
export type TestOutcome = 'completed' | 'stock_short' | 'refunded' | 'pending' | 'noop';

export type TestModeDeps = {
  db: Db;
  codeKey: Buffer;
  observe: StatusObserver;
  /** Runs the order's routing step `step` again after `delayMs` (the routing queue's job). */
  scheduleStep: (order: { id: number; utr: string }, step: number, delayMs: number) => Promise<void>;
};

/** A generated test code: `TEST-` and three groups of four upper-case hex digits. */
const testCode = () => `TEST-${randomBytes(6).toString('hex').toUpperCase().match(/.{4}/g)!.join('-')}`;

/** What the first order field's value ends with decides a test top-up (C25); the fields as a supplier would get them. */
export function testTopUpRule(order: { fields: OrderFieldValue[] | null; informations: Record<string, string> | null }): 'refuse' | 'wait' | 'complete' {
  const last4 = (fieldsOf(order)[0]?.value ?? '').slice(-4);
  return last4 === '0000' ? 'refuse' : last4 === '1111' ? 'wait' : 'complete';
}

/**
 * Moves a test order on, as the job of its routing step `step` (0: its fulfilment job). Idempotent: a run that finds
 * the order moved on (by an earlier run, or an operator) does nothing.
 */
export async function advanceTestOrder(deps: TestModeDeps, orderId: number, step: number): Promise<TestOutcome> {
  const { outcome, changes } = await deps.db.transaction(async (tx) => {
    const order = await lockOrder(tx, { id: orderId });
    if (order.livemode || order.routing_step !== step || order.with_operator) return { outcome: 'noop' as const, changes: [] };
    const done = order.kind === 'card' ? await testCardStep(tx, deps, order) : await testTopUpStep(tx, order);
    if (done.later !== null) await deps.scheduleStep({ id: orderId, utr: order.utr }, done.later, TEST_WAIT_MS);
    return done;
  });
  for (const change of changes) deps.observe(change);
  return outcome;
}

/** What a step did: the status changes to report once committed, and the next step whose job to add (null: none). */
type Step = { outcome: TestOutcome; changes: StatusChange[]; later: number | null };

const moved = (outcome: TestOutcome, change: StatusChange | null, later: number | null = null): Step => ({
  outcome: change ? outcome : 'noop',
  changes: change ? [change] : [],
  later,
});

/** A card order's lines get their codes: all of them, or one of a line of 13 on its first run (then the restock). */
async function testCardStep(tx: Tx, deps: TestModeDeps, order: LockedOrder): Promise<Step> {
  const lines = await tx.execute<{ id: number; card_service_id: number; quantity: number; codes_owed: number }>(sql`
    select id::float8 as id, card_service_id, quantity, codes_owed from order_lines where order_id = ${order.id} and codes_owed > 0 order by id`);
  const first = order.status === ORDER_STATUS.initiate;
  let short = false;
  for (const line of lines) {
    const giving = first && line.quantity === TEST_SHORT_QUANTITY ? 1 : line.codes_owed;
    short ||= giving < line.codes_owed;
    const codes = Array.from({ length: giving }, () => sealCode(deps.codeKey, testCode()));
    await tx.execute(sql`
      insert into card_codes (card_service_id, code_encrypted, code_digest, order_line_id, assigned_at, livemode)
      select ${line.card_service_id}, decode(c.sealed, 'hex'), decode(c.digest, 'hex'), ${line.id}, now(), false
      from unnest(${sql.param(codes.map((c) => c.codeEncrypted.toString('hex')))}::text[], ${sql.param(codes.map((c) => c.codeDigest.toString('hex')))}::text[])
        as c(sealed, digest)`);
    await tx.execute(sql`update order_lines set codes_owed = codes_owed - ${giving} where id = ${line.id}`);
  }
  // The restock is the next step's job, counted while the order is still `initiate` (as a routing step is).
  const later = short ? await nextRoutingStep(tx, order.id, order.routing_step) : null;
  const to = await transitionOrder(tx, order.id, short ? ORDER_STATUS.stock_short : ORDER_STATUS.completed);
  return moved(short ? 'stock_short' : 'completed', to && statusChange(to), later);
}

/** A top-up by its first field's last four digits: refused, completed, or completed on its next step 30 s later. */
async function testTopUpStep(tx: Tx, order: LockedOrder): Promise<Step> {
  if (order.status !== ORDER_STATUS.initiate) return moved('noop', null);
  const [row] = await tx.execute<{ fields: OrderFieldValue[] | null; informations: Record<string, string> | null }>(
    sql`select fields, informations from orders where id = ${order.id}`,
  );
  const rule = testTopUpRule(row!);
  if (rule === 'refuse') {
    // In this transaction, which holds the order: a second run finds it refunded.
    let change: StatusChange | null = null;
    await refundOrder(tx, order.utr, 'Test top-up refused: its first field ends in 0000.', (refunded) => (change = refunded));
    return moved('refunded', change);
  }
  if (rule === 'wait' && order.routing_step === 0) return { outcome: 'pending', changes: [], later: await nextRoutingStep(tx, order.id, 0) };
  const to = await transitionOrder(tx, order.id, ORDER_STATUS.completed);
  return moved('completed', to && statusChange(to));
}
