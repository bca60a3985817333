import type { Sql } from '../../src/db/client.js';

/**
 * Counts every row written to any table of a test database (insert, update, delete), through row
 * triggers that bump one counter inside the writing transaction: a write that rolls back is not counted.
 * `count()` before and after a refused request proves it wrote nothing, whatever table it might have touched.
 */
export async function watchWrites(sql: Sql): Promise<{ count: () => Promise<number> }> {
  await sql.unsafe(`
    create table if not exists test_writes (n bigint not null);
    insert into test_writes select 0 where not exists (select 1 from test_writes);
    create or replace function test_count_write() returns trigger language plpgsql as $$
      begin update test_writes set n = n + 1; return null; end $$;`);
  const tables = await sql<{ name: string }[]>`
    select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'test_writes'`;
  for (const { name } of tables) {
    await sql.unsafe(`
      drop trigger if exists test_count_writes on "${name}";
      create trigger test_count_writes after insert or update or delete on "${name}"
        for each row execute function test_count_write();`);
  }
  return {
    count: async () => Number((await sql<{ n: string }[]>`select n from test_writes`)[0]!.n),
  };
}
