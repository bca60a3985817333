import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { recordOperatorEvent } from '../../db/outbox.js';

export type LowStock = { card_service_id: number; card_id: number; name: string; available: number; threshold: number };

/**
 * Notes card services crossing their low-stock threshold (C17): falling below it raises one `stock.low` event
 * for the operators and marks the service alerted; stock back at the threshold clears the mark, so the next
 * fall alerts again. Once per crossing, however many orders take codes meanwhile: the flip of the mark is
 * the only writer, and concurrent callers see it through the row lock.
 * Called in the transaction that changed services' stock (`cardServiceIds`), and for every service from a
 * timer in the worker processes, which catches a crossing that two concurrent fulfilments each counted from
 * a snapshot still holding the other's codes.
 * Counting stops at the threshold, so a service holding a million codes costs the same as one holding ten.
 */
export async function noteStockLevels(db: DbOrTx, cardServiceIds?: number[]): Promise<LowStock[]> {
  if (cardServiceIds?.length === 0) return [];
  const flipped = await db.execute<LowStock & { alerted: boolean }>(sql`
    with level as (
      select s.id, s.card_id, s.name, s.low_stock_threshold as threshold,
        (select count(*) from (
          select 1 from card_codes c where c.card_service_id = s.id and c.order_line_id is null limit s.low_stock_threshold
        ) free)::int as available
      from card_services s
      where ${cardServiceIds === undefined ? sql`true` : sql`s.id = any(${sql.param(cardServiceIds)}::int[])`}
        and (s.low_stock_threshold > 0 or s.low_stock_alerted)
    )
    update card_services s set low_stock_alerted = level.available < level.threshold,
      low_stock_alerts = s.low_stock_alerts + (level.available < level.threshold)::int
    from level
    where s.id = level.id and s.low_stock_alerted <> (level.available < level.threshold)
    returning s.id as card_service_id, level.card_id, level.name, level.available, level.threshold, s.low_stock_alerted as alerted`);
  const alerts = flipped.filter((row) => row.alerted).map(({ alerted: _alerted, ...alert }) => alert);
  for (const alert of alerts) await recordOperatorEvent(db, 'stock.low', alert);
  return alerts;
}
