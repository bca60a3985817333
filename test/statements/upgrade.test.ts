import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/migrate.js';
import { statementPage } from '../../src/modules/statements/service.js';
import { emptyDatabase, previousMigrations } from '../helpers/migrations.js';

const BEFORE = 9; // migrations 0000 to 0008: the ledger without its currency

it("entries written before the ledger kept its currency, or by a process of the previous version, show their account's (migration 0009)", async () => {
  const database = await emptyDatabase();
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle(sql), { migrationsFolder: await previousMigrations(BEFORE) });
    for (const [id, currency] of [[1, 'USD'], [2, 'EUR']] as const) {
      await sql`
        insert into accounts (id, firstname, lastname, username, public_key, secret_key_hash, currency, currency_symbol, balance)
        overriding system value values (${id}, 'A', 'B', ${`ab${id}`}, ${`pk_${id}`}, '\\x00', ${currency}, '$', 15)`;
      await sql`
        insert into balance_ledger (account_id, amount, balance_after, kind, reason)
        values (${id}, 10, 10, 'deposit', 'Opening balance'), (${id}, 5, 15, 'adjustment', 'credit')`;
    }
    await migrateDatabase(database.url);
    // A process still running the previous version (a rolling restart) writes an entry as it did.
    await sql`insert into balance_ledger (account_id, amount, balance_after, kind) values (2, 1, 16, 'deposit')`;
    const shown = async (accountId: number) =>
      (await statementPage(sql, accountId, {}, { page: 1, perPage: 10 })).entries.map((e) => [e.kind, e.amount, e.currency]);
    expect(await shown(1)).toEqual([
      ['adjustment', '5.00', 'USD'],
      ['deposit', '10.00', 'USD'],
    ]);
    expect(await shown(2)).toEqual([
      ['deposit', '1.00', 'EUR'],
      ['adjustment', '5.00', 'EUR'],
      ['deposit', '10.00', 'EUR'],
    ]);
  } finally {
    await sql.end({ timeout: 5 });
    await database.drop();
  }
});
