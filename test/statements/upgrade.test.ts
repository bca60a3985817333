import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/migrate.js';
import { emptyDatabase, previousMigrations } from '../helpers/migrations.js';

const BEFORE = 9; // migrations 0000 to 0008: the ledger without its currency

it("the upgrade gives every ledger entry written before it its account's currency (migration 0009)", async () => {
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
    const rows = await sql`select account_id, currency from balance_ledger order by id`;
    expect(rows.map((r) => [r.account_id, r.currency])).toEqual([[1, 'USD'], [1, 'USD'], [2, 'EUR'], [2, 'EUR']]);
    await expect(sql`insert into balance_ledger (account_id, amount, balance_after, kind) values (1, 1, 16, 'deposit')`).rejects.toThrow(/currency/);
  } finally {
    await sql.end({ timeout: 5 });
    await database.drop();
  }
});
