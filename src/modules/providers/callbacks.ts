import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { AttemptOutcome } from '../../db/schema.js';
import { AppError, notFound } from '../../core/errors.js';
import type { Logger } from '../../lib/logger.js';
import { settleAttempt } from '../order-state/delivery.js';
import type { StatusObserver } from '../order-state/events.js';
import type { CallbackRequest } from '../suppliers/adapters/types.js';
import { connectionOf, providerRows } from '../suppliers/connections.js';
import type { SupplierRouting } from '../fulfilment/top-up-routing.js';

export type CallbackDeps = { db: Db; logger: Logger; observe: StatusObserver; codeKey: Buffer; scheduleStep: SupplierRouting['scheduleStep'] };

/** What a callback did: `applied` settled the attempt now; `unchanged` found it settled already, or still pending. */
export type CallbackResult = { reference: string; outcome: string; result: 'applied' | 'unchanged' };

/**
 * A provider's callback (C22): signed with the provider's credentials, about an order sent to that provider. It can
 * only settle that attempt, through the delivery state machine: idempotent (a second callback finds it settled) and
 * safe out of order (a `pending` after a `completed` changes nothing). A refusal hands the order to its next route
 * through a job, never in this request. An unknown provider is refused exactly as a bad signature is (401), so that
 * provider ids cannot be told apart from outside (`providerId` null: an id no provider can have).
 */
export async function receiveCallback(deps: CallbackDeps, providerId: number | null, request: CallbackRequest): Promise<CallbackResult> {
  const { db, logger } = deps;
  const [provider] = providerId === null ? [] : await providerRows(db, sql`p.id = ${providerId}`);
  const report = provider ? connectionOf(provider, deps.codeKey).verifyCallback(request) : null;
  if (!provider || !report) throw new AppError('bad_signature');
  const [attempt] = await db.execute<{ id: number; outcome: AttemptOutcome; utr: string }>(sql`
    select a.id::float8 as id, a.outcome, o.utr
    from provider_attempts a join orders o on o.id = a.order_id
    where o.utr = ${report.reference} and a.provider_id = ${providerId}`);
  if (!attempt) throw notFound('order sent to this provider', 'reference', report.reference);
  const { outcome } = report;
  const done = (result: CallbackResult['result']): CallbackResult => {
    logger.info({ utr: attempt.utr, provider: provider.name, outcome: outcome.kind, result }, 'provider callback');
    return { reference: report.reference, outcome: outcome.kind, result };
  };
  if (outcome.kind !== 'completed' && outcome.kind !== 'refused') return done('unchanged');

  const settled = await settleAttempt(
    db,
    attempt.id,
    outcome.kind === 'completed' ? { outcome: 'completed', providerReference: outcome.providerReference } : { outcome: 'refused', reason: outcome.reason },
    { by: 'provider', reroute: true },
  );
  if (!settled) {
    if (outcome.kind === 'completed' && attempt.outcome === 'refused') {
      // The provider said it would never deliver, and now says it did: the order may have gone to the next route.
      logger.error({ utr: attempt.utr, provider: provider.name }, 'a provider reported delivering an order it had refused');
    }
    return done('unchanged');
  }
  if (settled.change) deps.observe(settled.change);
  if (settled.step !== null) await deps.scheduleStep({ id: settled.orderId, utr: settled.utr }, settled.step, 0);
  return done('applied');
}
