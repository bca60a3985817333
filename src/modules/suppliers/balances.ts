import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { Logger } from '../../lib/logger.js';
import { recordOperatorEvent } from '../../db/outbox.js';
import { connectionOf, providerRows } from './connections.js';

export type BalanceLow = { provider_id: number; name: string; balance: string; threshold: string };

/**
 * Reads the balance of every active provider whose protocol can tell it, and raises one signed `provider.balance_low`
 * operator event per crossing of its threshold, like `stock.low`: the flip of `balance_low_alerted` is the only writer
 * of the alert, and a balance back at the threshold clears it so the next fall alerts again.
 */
export async function checkBalances(db: Db, codeKey: Buffer, logger: Logger): Promise<BalanceLow[]> {
  const rows = await providerRows(db, sql`p.status = 'active'`);
  const alerts: BalanceLow[] = [];
  for (const provider of rows) {
    const adapter = connectionOf(provider, codeKey);
    if (!adapter.balance) continue;
    let balance: string;
    try {
      balance = await adapter.balance(AbortSignal.timeout(provider.timeout_ms));
    } catch (err) {
      logger.warn({ err, provider: provider.name }, 'provider balance could not be read');
      continue;
    }
    // One statement: the balance written, and whether this reading is the one that crossed below the threshold.
    const [flipped] = await db.execute<BalanceLow & { alerted: boolean }>(sql`
      update providers p set balance = ${balance}::numeric, balance_checked_at = now(),
        balance_low_alerted = coalesce(${balance}::numeric < p.balance_low_threshold, false)
      from (select id, balance_low_alerted as was from providers where id = ${provider.id} for update) old
      where p.id = old.id
      returning p.id as provider_id, p.name, p.balance::text as balance, p.balance_low_threshold::text as threshold,
                p.balance_low_alerted and not old.was as alerted`);
    if (flipped?.alerted) {
      const { alerted: _alerted, ...alert } = flipped;
      await recordOperatorEvent(db, 'provider.balance_low', alert);
      alerts.push(alert);
    }
  }
  return alerts;
}
