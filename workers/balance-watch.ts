import { runPeriodically, type Periodic } from '../src/db/periodic.js';
import { checkBalances } from '../src/modules/suppliers/index.js';
import type { Services } from '../src/runtime/services.js';

/** One run at a time across every worker process. */
const BALANCE_WATCH_LOCK = 7301008;

/**
 * Every `intervalMs`: reads each provider's balance where its protocol can tell it, and raises `provider.balance_low`
 * once per crossing of the operator's threshold (C22). The lock's transaction only serializes the runs; the balances
 * are written outside it, as each answer arrives.
 */
export function startBalanceWatch(services: Services, intervalMs = 60_000): Periodic {
  const { db, config, logger } = services;
  return runPeriodically(
    db,
    { lockKey: BALANCE_WATCH_LOCK, intervalMs, onError: (err) => logger.warn({ err }, 'provider balance watch failed') },
    async () => {
      const alerts = await checkBalances(db, config.codeEncryptionKey, logger);
      for (const alert of alerts) logger.warn(alert, 'provider balance below its threshold');
    },
  );
}
