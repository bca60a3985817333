import postgres from 'postgres';
import { connectDatabase } from '../../src/db/client.js';
import { fromDatabase, listOrders, type OrderReader } from '../../src/modules/orders/listing.js';
import { planOf, timesRead } from '../helpers/query-plans.js';

/** Runs `once` again and again for `seconds`: what the runs counted in all, and the milliseconds they took. */
async function repeatFor(seconds: number, once: () => Promise<number>): Promise<{ count: number; ms: number }> {
  const started = performance.now();
  let count = 0;
  while (performance.now() < started + seconds * 1000) count += await once();
  return { count, ms: performance.now() - started };
}

/** Pages read at once: one statement for each group (the batch a busy API process sends), then one at a time. */
const GROUPS = [10, 1];

/**
 * `npm run bench -- --order-list`: the order list's statement alone, through listOrders on the database `url` (no HTTP,
 * no API process), on the accounts `accountIds` (order histories loaded by the caller): first pages of ten orders read
 * 10 at a time, as concurrent requests share a statement, and one at a time, each for `seconds`, in turns A, B, B, A;
 * then the statement of a group EXPLAINed with ANALYZE: how many times the page's card codes were looked up against
 * the lines on its pages (once each when each line's text is built once); last, that statement run again and again with a
 * plan made for each call and with PostgreSQL's generic plan (planCacheModes). Lines of the text it writes.
 */
export async function measureOrderList(url: string, accountIds: number[], seconds: number): Promise<string[]> {
  let sent: { text: string; params: readonly unknown[] } | null = null;
  const database = connectDatabase(url, {
    max: 4,
    onQuery: (text, params) => {
      if (/\border_lines\b/.test(text)) sent = { text, params };
    },
  });
  // The codes are not opened: what is measured is the statement.
  const reader = (id: number): OrderReader => ({ caller: { id, livemode: true }, assetBase: 'http://127.0.0.1', openCode: () => 'CODE' });
  let next = 0;
  let lastGroup: number[] = [];
  const group = (size: number) => {
    lastGroup = Array.from({ length: size }, () => accountIds[next++ % accountIds.length]!);
    return Promise.all(lastGroup.map((id) => listOrders(fromDatabase(database.db), reader(id), 'card', { page: 1, perPage: 10 })));
  };
  const turn = (size: number) => repeatFor(seconds, async () => (await group(size)).length);
  try {
    for (const size of GROUPS) await turn(size);
    const figures = new Map<number, Array<{ count: number; ms: number }>>(GROUPS.map((size) => [size, []]));
    for (const size of [...GROUPS, ...[...GROUPS].reverse()]) figures.get(size)!.push(await turn(size));
    const lines = ['| pages a statement | turn | pages/s | ms a page |', '|---:|---:|---:|---:|'];
    for (const [size, turns] of figures) {
      turns.forEach(({ count: pages, ms }, i) => lines.push(`| ${size} | ${i + 1} | ${Math.round((pages * 1000) / ms).toLocaleString('en')} | ${(ms / pages).toFixed(3)} |`));
    }
    await group(10);
    const statement = sent as { text: string; params: readonly unknown[] } | null;
    if (!statement) throw new Error('the order list sent no statement');
    const codeLookups = timesRead(await planOf(database.sql, statement.text, statement.params, { analyze: true }), 'card_codes');
    const [{ lines: pageLines }] = await database.sql<[{ lines: number }]>`
      select count(*)::int as lines from unnest(${lastGroup}::int[]) a(id)
      cross join lateral (select id from orders where account_id = a.id and livemode and kind = 'card' order by created_at desc, id desc limit 10) o
      join order_lines l on l.order_id = o.id`;
    lines.push('', `The statement of a group of 10 pages, EXPLAIN ANALYZE: card codes looked up ${codeLookups} times for ${pageLines} lines on its pages.`);
    return [...lines, '', ...(await planCacheModes(url, statement, seconds))];
  } finally {
    await database.close();
  }
}

/**
 * What planning costs the list: `statement` as the service sends it (named, so PostgreSQL may keep its plan), run for
 * `seconds` on a connection with PostgreSQL's default (plan_cache_mode = auto: a plan made for each call unless the
 * generic one is costed no dearer), one that plans each call (force_custom_plan) and one that keeps the generic plan
 * (force_generic_plan), in turns A, B, C, C, B, A; JIT off on all three (a generic plan costed for pages of unknown size
 * would be compiled at each call).
 */
async function planCacheModes(url: string, statement: { text: string; params: readonly unknown[] }, seconds: number): Promise<string[]> {
  const modes = ['auto', 'force_custom_plan', 'force_generic_plan'] as const;
  const clients = modes.map((mode) =>
    postgres(url, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: mode, jit: 'off' } as Record<string, string> }),
  );
  const run = async (client: postgres.Sql) => {
    const { count: calls, ms } = await repeatFor(seconds, async () => (await client.unsafe(statement.text, statement.params as never[], { prepare: true }), 1));
    return ms / calls;
  };
  try {
    for (const client of clients) await run(client);
    const figures: string[][] = modes.map(() => []);
    for (const i of [0, 1, 2, 2, 1, 0]) figures[i]!.push((await run(clients[i]!)).toFixed(3));
    const lines = ['| plan_cache_mode | turn | ms a statement of 10 pages |', '|---|---:|---:|'];
    modes.forEach((mode, i) => figures[i]!.forEach((ms, turn) => lines.push(`| ${mode} | ${turn + 1} | ${ms} |`)));
    return lines;
  } finally {
    await Promise.all(clients.map((client) => client.end({ timeout: 5 })));
  }
}
