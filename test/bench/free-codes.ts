import type { Sql } from 'postgres';

/** Codes of each of the two services, and the batch fulfilment takes at most (a batch of 128 one-code orders). */
const CODES = 120_000;
const BATCH = 128;
const WINDOW = 20_480;

/**
 * `npm run bench -- --free-codes`: what taking a batch of 128 free codes costs as a service's stock is given out, read
 * from the start of the index of free codes (as fulfilment did) and from after the newest code given out (as it does:
 * card_codes_taken_idx), in turns on two services of 120,000 codes each so that the machine's noise falls on both
 * alike. Each taken code leaves an entry in the index of free codes until card_codes is vacuumed (nothing vacuums it
 * here, as nothing does during a busy hour). Lines of a table: codes taken, then the mean milliseconds per batch of each.
 */
export async function compareFreeCodeReads(sql: Sql, services: [number, number], orderLineId: number): Promise<string[]> {
  for (const service of services) {
    await sql`
      insert into card_codes (card_service_id, code_encrypted, code_digest)
      select ${service}, sha256(convert_to('code:' || g, 'UTF8')), sha256(convert_to(${service}::text || ':' || g, 'UTF8'))
      from generate_series(1, ${CODES}::int) g`;
  }
  await sql`vacuum analyze card_codes`;
  const [fromStart, fromNewest] = services;
  const take = async (service: number, afterNewest: boolean) => {
    const started = performance.now();
    await sql.begin(
      (tx) => tx`
        with picked as (
          select id from card_codes
          where card_service_id = ${service} and order_line_id is null
            and id > ${afterNewest ? sql`coalesce((select max(t.id) from card_codes t where t.card_service_id = ${service} and t.order_line_id is not null and t.livemode), 0)` : sql`0`}
          order by id limit ${BATCH} for no key update skip locked)
        update card_codes c set order_line_id = ${orderLineId}, assigned_at = now() from picked where c.id = picked.id`,
    );
    return performance.now() - started;
  };
  const lines = ['| codes taken | from the start (ms a batch) | from the newest given out (ms a batch) |', '|---:|---:|---:|'];
  let sums = [0, 0];
  for (let taken = BATCH; taken <= CODES - 1_000; taken += BATCH) {
    sums = [sums[0]! + (await take(fromStart, false)), sums[1]! + (await take(fromNewest, true))];
    if (taken % WINDOW === 0) {
      const batches = WINDOW / BATCH;
      lines.push(`| ${(taken - WINDOW).toLocaleString('en')}–${taken.toLocaleString('en')} | ${(sums[0]! / batches).toFixed(2)} | ${(sums[1]! / batches).toFixed(2)} |`);
      sums = [0, 0];
    }
  }
  return lines;
}
