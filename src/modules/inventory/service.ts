import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { cardCodes, cardServices, orderLines, orders } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { ORDER_STATUS } from '../orders/state.js';
import { sealCode } from './codes.js';

/** Rows per INSERT: three parameters each, well under PostgreSQL's 65 535-parameter limit. */
const INSERT_CHUNK = 5_000;

async function assertCardService(db: DbOrTx, cardServiceId: number): Promise<void> {
  const rows = await db.execute(sql`select 1 from ${cardServices} where id = ${cardServiceId}`);
  if (rows.length === 0) throw new AppError('not_found');
}

/**
 * Stores new codes of a card service, sealed. Codes are trimmed and blanks dropped; a code already
 * in the batch or already stored for this service is skipped (the unique digest index decides, so
 * concurrent imports of the same code add it once). Codes are handed out in the order given.
 */
export async function addCodes(
  db: DbOrTx,
  key: Buffer,
  cardServiceId: number,
  codes: string[],
): Promise<{ added: number; skipped: number }> {
  await assertCardService(db, cardServiceId);
  const given = codes.map((code) => code.trim()).filter((code) => code !== '');
  const distinct = [...new Set(given)];
  let added = 0;
  for (let start = 0; start < distinct.length; start += INSERT_CHUNK) {
    const rows = distinct.slice(start, start + INSERT_CHUNK).map((code) => ({ cardServiceId, ...sealCode(key, code) }));
    const inserted = await db
      .insert(cardCodes)
      .values(rows)
      .onConflictDoNothing({ target: [cardCodes.cardServiceId, cardCodes.codeDigest] })
      .returning({ id: cardCodes.id });
    added += inserted.length;
  }
  return { added, skipped: given.length - added };
}

/** Unassigned codes of a service, and the codes its `stock_short` orders are still owed. */
export async function stockOf(
  db: DbOrTx,
  cardServiceId: number,
): Promise<{ available: number; reserved_for_stock_short: number }> {
  await assertCardService(db, cardServiceId);
  const [row] = await db.execute<{ available: number; owed: number }>(sql`
    select
      (select count(*)::int from ${cardCodes}
        where card_service_id = ${cardServiceId} and order_line_id is null) as available,
      (select coalesce(sum(l.codes_owed), 0)::int from ${orderLines} l join ${orders} o on o.id = l.order_id
        where l.card_service_id = ${cardServiceId} and l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short}) as owed`);
  return { available: row!.available, reserved_for_stock_short: row!.owed };
}
