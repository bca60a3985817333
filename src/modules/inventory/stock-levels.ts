import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { cardCodes, cardServices } from '../../db/schema.js';

/**
 * Unassigned codes of every card service (0 for a sold-out one), in one grouped query over the partial index
 * of free codes. PostgreSQL cancels it after `timeoutMs`, so a slow count never holds a connection.
 */
export async function availableCodesPerService(db: Db, timeoutMs = 2000): Promise<Array<{ cardServiceId: number; count: number }>> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`);
    return tx.execute<{ cardServiceId: number; count: number }>(sql`
      select s.id as "cardServiceId", count(c.id)::int as count
      from ${cardServices} s left join ${cardCodes} c on c.card_service_id = s.id and c.order_line_id is null
      group by s.id
      order by s.id`);
  });
}

/** Card services with a low-stock threshold: the stock.low alerts raised for each, and whether it is below now. */
export async function lowStockPerService(db: Db): Promise<Array<{ cardServiceId: number; alerts: number; below: boolean }>> {
  return db.execute<{ cardServiceId: number; alerts: number; below: boolean }>(sql`
    select s.id as "cardServiceId", s.low_stock_alerted as below, s.low_stock_alerts as alerts
    from ${cardServices} s
    where s.low_stock_threshold > 0 or s.low_stock_alerted
    order by s.id`);
}
