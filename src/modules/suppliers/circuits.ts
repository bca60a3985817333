import { circuitBreaker, ConsecutiveBreaker, handleWhenResult, isBrokenCircuitError, timeout, TimeoutStrategy, wrap, type IPolicy } from 'cockatiel';
import { eq, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.js';
import { providers } from '../../db/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import type { SupplierOutcome } from './adapters/types.js';

export type CircuitSettings = { failures: number; openSeconds: number };

/** What a provider call came to: an outcome, or `skipped` when this process's circuit for it is open (nothing sent). */
export type GuardedOutcome = SupplierOutcome | { kind: 'skipped' };

export type ProviderCall = {
  provider: { id: number; name: string; timeoutMs: number };
  /** `send` or `status`, for the metrics and logs. */
  request: 'send' | 'status';
  run: (signal: AbortSignal) => Promise<SupplierOutcome>;
};

export type Circuits = { call: (call: ProviderCall) => Promise<GuardedOutcome> };

/**
 * Circuit breakers and timeouts per provider (C22), with cockatiel: a provider whose calls end in `unknown`
 * `failures` times in a row has its circuit opened for `openSeconds`, then one call probes it. The breaker lives in
 * each process; its opening is written to the provider's row (`circuit_open_until`), which the routing reads, so
 * every worker process skips the provider for new orders at once and `GET /admin/providers` shows it.
 * A refusal is a working provider saying no, never a failure here. An unknown outcome is the provider's last error.
 */
export function createCircuits({ db, logger, metrics, settings }: { db: Db; logger: Logger; metrics: Pick<Metrics, 'providerRequest'>; settings: CircuitSettings }): Circuits {
  const policies = new Map<number, { timeoutMs: number; policy: IPolicy }>();

  /** Writes what every process and operator reads about a provider; a failed write is logged, never in a call's way. */
  const recordOn = ({ id, name }: { id: number; name: string }, values: PgUpdateSetSource<typeof providers>, what: string) =>
    void db
      .update(providers)
      .set({ ...values, updatedAt: sql`now()` })
      .where(eq(providers.id, id))
      .catch((err: unknown) => logger.warn({ err, provider: name }, `could not record ${what}`));

  function policyOf({ id, name, timeoutMs }: ProviderCall['provider']): IPolicy {
    const known = policies.get(id);
    if (known && known.timeoutMs === timeoutMs) return known.policy;
    const breaker = circuitBreaker(
      handleWhenResult((result) => (result as SupplierOutcome).kind === 'unknown'),
      { halfOpenAfter: settings.openSeconds * 1000, breaker: new ConsecutiveBreaker(settings.failures) },
    );
    // The state every process reads: until when new orders skip this provider (null: they do not).
    breaker.onBreak(() => {
      logger.warn({ provider: name, openSeconds: settings.openSeconds }, 'provider circuit opened');
      recordOn({ id, name }, { circuitOpenUntil: sql`now() + make_interval(secs => ${settings.openSeconds})` }, 'the open circuit');
    });
    breaker.onReset(() => {
      logger.info({ provider: name }, 'provider circuit closed');
      recordOn({ id, name }, { circuitOpenUntil: null }, 'the closed circuit');
    });
    // Cooperative: the adapter sees the signal abort and answers `unknown` itself (it never throws).
    const policy = wrap(breaker, timeout(timeoutMs, TimeoutStrategy.Cooperative));
    policies.set(id, { timeoutMs, policy });
    return policy;
  }

  return {
    call: async (call) => {
      const started = performance.now();
      let outcome: GuardedOutcome;
      try {
        outcome = await policyOf(call.provider).execute(({ signal }) => call.run(signal));
      } catch (err) {
        if (!isBrokenCircuitError(err)) throw err;
        outcome = { kind: 'skipped' };
      }
      metrics.providerRequest(call.provider.name, call.request, outcome.kind, (performance.now() - started) / 1000);
      // What operators see as the provider's last error (GET /admin/providers).
      if (outcome.kind === 'unknown') recordOn(call.provider, { lastError: `${call.request}: ${outcome.reason}`.slice(0, 500), lastErrorAt: sql`now()` }, 'the last error');
      return outcome;
    },
  };
}
