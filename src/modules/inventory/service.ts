import { sql } from 'drizzle-orm';
import type { TransactionSql } from 'postgres';
import type { Db, DbOrTx, Sql } from '../../db/client.js';
import { cardCodes, cardServices, orderLines, orders } from '../../db/schema.js';
import { notFound, validationError } from '../../core/errors.js';
import { isStorableText, NOT_STORABLE } from '../../lib/text.js';
import { ORDER_STATUS } from '../order-state/state.js';
import { badCode, MAX_CODE_CHARS, tooLong } from './code-lines.js';
import { sealCode } from './codes.js';

/** Codes per batch: each batch is copied into a scratch table, then moved into the stock in one INSERT. */
const BATCH_CODES = 5_000;

/** Characters per write to a COPY stream: each write is sent before the next codes are read. */
const COPY_WRITE_CHARS = 64 * 1024;

/** Key space of the per-service import lock (two-int advisory locks never collide with one-bigint ones). */
const IMPORT_LOCK_SPACE = 7301005;

async function assertCardService(db: DbOrTx, cardServiceId: number): Promise<void> {
  const rows = await db.execute(sql`select 1 from ${cardServices} where id = ${cardServiceId}`);
  if (rows.length === 0) throw notFound('card service', 'id', cardServiceId);
}

/**
 * Streams `rows` into the scratch table with COPY. Whether PostgreSQL took them is told by the next statement on
 * the transaction (after a refused COPY it fails too): postgres.js never settles a COPY that PostgreSQL refuses
 * after its last row, so its end is not awaited.
 */
async function copyIncoming(tx: TransactionSql, rows: AsyncIterable<string>): Promise<void> {
  const stream = await tx`copy incoming_codes (code_encrypted, code_digest) from stdin`.writable();
  let refused: unknown;
  stream.on('error', (err) => (refused ??= err));
  const send = (chunk: string) => new Promise<void>((resolve, reject) => stream.write(chunk, (err) => (err ? reject(err) : resolve())));
  let chunk = '';
  try {
    for await (const row of rows) {
      chunk += row;
      if (chunk.length >= COPY_WRITE_CHARS) {
        await send(chunk);
        chunk = '';
      }
    }
    if (chunk !== '') await send(chunk);
  } catch (err) {
    // Aborts the COPY (the transaction is rolled back) and reports PostgreSQL's refusal if there was one.
    stream.destroy(err as Error);
    throw refused ?? err;
  }
  stream.end();
}

/** Where an import is: non-blank codes read so far, codes stored, and duplicates skipped. */
export type ImportCounts = { read: number; added: number; skipped: number };

/**
 * Stores new codes of a card service, sealed, reading `codes` (a list, or lines streamed from a file or an
 * upload) in batches of BATCH_CODES. Each batch streams to PostgreSQL (COPY) as its codes are read and sealed, so
 * memory holds a few codes at a time whatever the import's size: no code outlives the write that sends it. Codes
 * are trimmed and blanks dropped; a code already read or already stored for this service is skipped (the unique
 * digest index decides). Codes are handed out in the order given.
 *
 * All or nothing: the batches go into one transaction, so a bad code, an upload cut short or over its limit
 * (the stream throws) leaves the stock as it was. Imports of one service take turns (an advisory lock), so two
 * imports with codes in common never deadlock on each other's rows. `onBatch` hears the counts after every batch.
 */
export async function addCodes(
  db: Db,
  key: Buffer,
  cardServiceId: number,
  codes: Iterable<string> | AsyncIterable<string>,
  onBatch: (counts: ImportCounts) => void = () => {},
): Promise<{ added: number; skipped: number }> {
  await assertCardService(db, cardServiceId);
  const lines = Symbol.asyncIterator in codes ? codes[Symbol.asyncIterator]() : codes[Symbol.iterator]();
  const counts = { read: 0, added: 0, skipped: 0 };
  let line = 0;
  let more = true;
  /** The next batch as COPY rows (bytea in hex), each code sealed as it is read. */
  async function* batch() {
    for (let taken = 0; taken < BATCH_CODES; ) {
      const next = await lines.next();
      if (next.done) {
        more = false;
        return;
      }
      line += 1;
      const code = next.value.trim();
      if (code === '') continue;
      if (code.length > MAX_CODE_CHARS) throw tooLong(line);
      if (!isStorableText(code)) throw badCode(line, NOT_STORABLE);
      counts.read += 1;
      taken += 1;
      const { codeEncrypted, codeDigest } = sealCode(key, code);
      yield `\\\\x${codeEncrypted.toString('hex')}\t\\\\x${codeDigest.toString('hex')}\n`;
    }
  }
  try {
    // COPY is a postgres.js stream, hence drizzle's client (`$client`, the one it was built on) rather than drizzle.
    return await (db as Db & { $client: Sql }).$client.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${IMPORT_LOCK_SPACE}, ${cardServiceId})`;
      await tx`create temp table incoming_codes (position bigserial, code_encrypted bytea not null, code_digest bytea not null) on commit drop`;
      while (more) {
        await copyIncoming(tx, batch());
        const [moved] = await tx<{ added: number }[]>`
          with added as (
            insert into card_codes (card_service_id, code_encrypted, code_digest)
            select ${cardServiceId}, code_encrypted, code_digest from incoming_codes order by position
            on conflict (card_service_id, code_digest) do nothing
            returning 1)
          select count(*)::int as added from added`;
        await tx`truncate incoming_codes`;
        counts.added += moved!.added;
        counts.skipped = counts.read - counts.added;
        onBatch({ ...counts });
      }
      if (counts.read === 0) throw validationError(['The codes field is required.']);
      return { added: counts.added, skipped: counts.skipped };
    });
  } finally {
    // Lets the source close (a file, an upload) when the import stops early.
    await lines.return?.();
  }
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
        where l.card_service_id = ${cardServiceId} and l.codes_owed > 0 and o.status = ${ORDER_STATUS.stock_short} and o.livemode) as owed`);
  return { available: row!.available, reserved_for_stock_short: row!.owed };
}
