/**
 * The upgrade to one delivery path (migration 0007), on a database left by the previous version with work in flight:
 * an open top-up the old TOPUP_PROVIDER=http sender may have delivered waits for an operator, open top-ups get their
 * fields in the form's order, an open attempt keeps the address it was sent to, and the `codes_owed >= 0` check, added
 * NOT VALID, is validated after the migrations, or stays NOT VALID (said at start) while old rows break it.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/migrate.js';
import { emptyDatabase, previousMigrations } from '../helpers/migrations.js';

const BEFORE = 7; // migrations 0000 to 0006: the previous version's schema

let url: string;
let sql: postgres.Sql;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ url, drop } = await emptyDatabase());
  sql = postgres(url, { max: 1, onnotice: () => {} });
  await migrate(drizzle(sql), { migrationsFolder: await previousMigrations(BEFORE) });

  // What the previous version left: a buyer, a Mobile Legends top-up whose form has a select first, a routed provider.
  await sql`
    insert into accounts (id, firstname, lastname, username, public_key, secret_key_hash, currency, currency_symbol)
    overriding system value values (1, 'A', 'B', 'ab', 'pk_1', '\\x00', 'USD', '$')`;
  await sql`insert into categories (id, name, icon, type) overriding system value values (1, 'Games', 'x', 'top_up')`;
  const form = [
    { field_value: 'Region', field_name: 'region', field_placeholder: '', field_note: '', field_type: 'select', option: { sea: 'SEA' } },
    { field_value: 'User ID', field_name: 'user_id', field_placeholder: '', field_note: '', field_type: 'text' },
    { field_value: 'Zone ID', field_name: 'zone_id', field_placeholder: '', field_note: '', field_type: 'text' },
  ];
  await sql`
    insert into top_ups (id, category_id, image, name, slug, order_information) overriding system value
    values (1, 1, '{}', 'Mobile Legends', 'ml', ${JSON.stringify(form)}::jsonb)`;
  await sql`insert into top_up_services (id, top_up_id, name, price) overriding system value values (1, 1, '86 diamonds', 6.00)`;
  await sql`
    insert into providers (id, name, kind, base_url, credentials_sealed, timeout_ms) overriding system value
    values (1, 'Upstream', 'http', 'https://old.example.com/api', '\\x00', 7000),
           (2, 'Digiflazz', 'digiflazz', 'https://api.digiflazz.com', '\\x00', 9000)`;
  const order = async (id: number, status: number, deliveryAttempts: number) => {
    await sql`
      insert into orders (id, utr, account_id, kind, top_up_id, status, total, currency, currency_symbol, informations, delivery_attempts)
      overriding system value
      values (${id}, ${`T${id}`}, 1, 'top_up', 1, ${status}, 6.00, 'USD', '$', ${JSON.stringify({ 'Zone ID': '1234', Region: 'sea', 'User ID': '12345678' })}::jsonb, ${deliveryAttempts})`;
    await sql`
      insert into order_lines (order_id, top_up_service_id, quantity, base_price, discount, unit_price, line_total)
      values (${id}, 1, 1, 6.00, 0, 6.00, 6.00)`;
  };
  await order(1, 0, 2); // sent by the old sender, outcome unknown
  await order(2, 0, 0); // not sent yet
  await order(3, 1, 1); // delivered by the old sender
  await order(4, 0, 0); // with an attempt open at the routed provider
  await sql`insert into provider_attempts (order_id, provider_id, product_code, outcome) values (4, 1, 'ML86', 'pending')`;
  await order(6, 0, 0); // with an attempt open at Digiflazz, sent with the previous version's customer_no
  await sql`insert into provider_attempts (order_id, provider_id, product_code, outcome) values (6, 2, 'ml86', 'pending')`;
  // A card line dealt one code more than it owed, as a fixed defect could leave it.
  await sql`
    insert into orders (id, utr, account_id, kind, status, total, currency, currency_symbol) overriding system value
    values (5, 'T5', 1, 'card', 1, 3.00, 'USD', '$')`;
  await sql`
    insert into order_lines (id, order_id, quantity, base_price, discount, unit_price, line_total, codes_owed) overriding system value
    values (50, 5, 1, 3.00, 0, 3.00, 3.00, -1)`;
});
afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await drop?.();
});

describe('the upgrade to one delivery path', () => {
  it('migrates what it finds open, and says so when old rows keep a check from being validated', async () => {
    const warnings = await migrateDatabase(url);
    expect(warnings).toEqual([
      'order_lines_codes_owed_ck: some order lines were dealt more codes than they owed (codes_owed below 0); the check holds for new rows only until they are repaired',
    ]);

    const orders = await sql<{ id: number; awaiting: boolean; note: string | null; fields: unknown }[]>`
      select id::int, awaiting_operator_since is not null as awaiting, note, fields from orders where kind = 'top_up' order by id`;
    expect(orders[0]).toMatchObject({ id: 1, awaiting: true, note: expect.stringContaining('TOPUP_PROVIDER=http sender of an earlier version') });
    expect(orders.slice(1).map((o) => o.awaiting)).toEqual([false, false, false, false]);
    // Open orders get their fields in the form's order (select first, as the form has it); a settled one needs none.
    const inFormOrder = [
      { name: 'region', label: 'Region', type: 'select', value: 'sea' },
      { name: 'user_id', label: 'User ID', type: 'text', value: '12345678' },
      { name: 'zone_id', label: 'Zone ID', type: 'text', value: '1234' },
    ];
    expect(orders.map((o) => o.fields)).toEqual([inFormOrder, inFormOrder, null, inFormOrder, inFormOrder]);
    const [column] = await sql`select count(*)::int as n from information_schema.columns where table_name = 'orders' and column_name = 'delivery_attempts'`;
    expect(column!.n).toBe(0);
    // An open attempt keeps asking where it was sent, with the timeout it was sent with.
    const [attempt] = await sql`select base_url, timeout_ms, destination from provider_attempts where order_id = 4`;
    expect(attempt).toEqual({ base_url: 'https://old.example.com/api', timeout_ms: 7000, destination: null });
    // A Digiflazz status query sends the transaction again: with the customer_no it was first sent with, which the
    // previous version made from every value in the stored order (jsonb's: the shorter labels first).
    const [digiflazz] = await sql`select destination from provider_attempts where order_id = 6`;
    expect(digiflazz!.destination).toBe('sea123456781234');

    // The check holds for new rows at once, though not validated.
    const [check] = await sql`select convalidated from pg_constraint where conname = 'order_lines_codes_owed_ck'`;
    expect(check!.convalidated).toBe(false);
    await expect(sql`update order_lines set codes_owed = -2 where id = 50`).rejects.toThrow(/order_lines_codes_owed_ck/);

    // Repaired, the next start validates it.
    await sql`update order_lines set codes_owed = 0 where id = 50`;
    expect(await migrateDatabase(url)).toEqual([]);
    const [validated] = await sql`select convalidated from pg_constraint where conname = 'order_lines_codes_owed_ck'`;
    expect(validated!.convalidated).toBe(true);
  });
});
