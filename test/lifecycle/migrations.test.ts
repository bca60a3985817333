import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/migrate.js';
import { emptyDatabase } from '../helpers/migrations.js';

describe('processes starting together on a new database', () => {
  it('four migrating at once all succeed, round after round: every online index built once and valid, late checks validated', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 10; round++) {
      const database = await emptyDatabase();
      try {
        const results = await Promise.allSettled(Array.from({ length: 4 }, () => migrateDatabase(database.url)));
        expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), `round ${round}`).toEqual([]);
        const sql = postgres(database.url, { max: 1, onnotice: () => {} });
        try {
          const indexes = await sql<{ name: string; valid: boolean }[]>`
            select c.relname as name, i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
            where c.relname in ('auth_tokens_ended_idx', 'webhook_events_created_idx', 'order_lines_waiting_idx', 'card_codes_taken_idx') order by c.relname`;
          expect(indexes).toEqual([
            { name: 'auth_tokens_ended_idx', valid: true },
            { name: 'card_codes_taken_idx', valid: true },
            { name: 'order_lines_waiting_idx', valid: true },
            { name: 'webhook_events_created_idx', valid: true },
          ]);
          const [check] = await sql`select convalidated from pg_constraint where conname = 'order_lines_codes_owed_ck'`;
          expect(check!.convalidated).toBe(true);
        } finally {
          await sql.end({ timeout: 5 });
        }
      } finally {
        await database.drop();
      }
    }
  });
});
