/**
 * The upgrade that keeps a campaign's units sold on its membership (migration 0016), on a database left by the previous
 * version, whose campaigns paused and run again had started their count from 0: each membership gets the units its
 * orders took (those of orders not refunded, and the codes a refunded order was delivered), past its max_sell if the
 * reset sold past it; a service carrying its campaign counts at least that, up to its cap; a membership at or past
 * its cap does not apply again, and one whose max_sell is raised takes up from all it sold.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { connectDatabase } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { syncCampaigns } from '../../src/modules/campaigns/service.js';
import { shiftDays } from '../helpers/fixtures.js';
import { emptyDatabase, previousMigrations } from '../helpers/migrations.js';

const BEFORE = 16; // migrations 0000 to 0015: the count on the service only

it('gives each membership the units its orders took, and a service carrying its campaign at least that (migration 0016)', async () => {
  const database = await emptyDatabase();
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle(sql), { migrationsFolder: await previousMigrations(BEFORE) });
    await sql`
      insert into accounts (id, firstname, lastname, username, public_key, secret_key_hash, currency, currency_symbol)
      overriding system value values (1, 'A', 'B', 'ab', 'pk_1', '\\x00', 'USD', '$')`;
    await sql`insert into categories (id, name, icon, type) overriding system value values (1, 'Cards', 'x', 'card')`;
    await sql`insert into cards (id, category_id, name, slug, image) overriding system value values (1, 1, 'Steam', 'steam', '{}')`;
    // Service 1 carries campaign 1 (running), its count reset to 1 by a pause before the upgrade; service 2 is out of
    // campaign 2 (paused).
    await sql`
      insert into card_services (id, card_id, name, price, is_offered, campaign_id, max_sell, offered_sell, old_data) overriding system value
      values (1, 1, '10 USD', 8.00, 0, null, 0, 0, null), (2, 1, '20 USD', 20.00, 0, null, 0, 0, null), (3, 1, '50 USD', 45.00, 0, null, 0, 0, null)`;
    await sql`
      insert into campaigns (id, name, start_date, end_date, status) overriding system value
      values (1, 'Running', ${shiftDays(-1)}, ${shiftDays(7)}, 1), (2, 'Paused', ${shiftDays(-1)}, ${shiftDays(7)}, 0),
        (3, 'Past its cap', ${shiftDays(-1)}, ${shiftDays(7)}, 1)`;
    await sql`update card_services set is_offered = 1, campaign_id = 1, max_sell = 10, offered_sell = 1, old_data = '{"price":"10.00","discount":"0.00","discount_type":"flat"}' where id = 1`;
    // Service 3 carries campaign 3, which the reset let sell past its max_sell of 4.
    await sql`update card_services set is_offered = 1, campaign_id = 3, max_sell = 4, offered_sell = 1, old_data = '{"price":"50.00","discount":"0.00","discount_type":"flat"}' where id = 3`;
    await sql`
      insert into campaign_card_services (campaign_id, card_service_id, price, max_sell)
      values (1, 1, 8.00, 10), (2, 2, 15.00, 5), (3, 3, 45.00, 4)`;
    let lineId = 0;
    const order = async (id: number, status: number, serviceId: number, campaignId: number, campaignUnits: number, codes: number, livemode = true) => {
      await sql`
        insert into orders (id, utr, account_id, kind, status, total, currency, currency_symbol, livemode) overriding system value
        values (${id}, ${`C${id}`}, 1, 'card', ${status}, 1.00, 'USD', '$', ${livemode})`;
      lineId += 1;
      await sql`
        insert into order_lines (id, order_id, card_service_id, quantity, base_price, discount, unit_price, line_total, campaign_id, campaign_units)
        overriding system value values (${lineId}, ${id}, ${serviceId}, ${campaignUnits}, 1.00, 0, 1.00, 1.00, ${campaignId}, ${campaignUnits})`;
      for (let c = 0; c < codes; c++) {
        await sql`
          insert into card_codes (card_service_id, code_encrypted, code_digest, order_line_id, assigned_at)
          values (${serviceId}, ${Buffer.from(`code-${id}-${c}`)}, ${Buffer.from(`digest-${id}-${c}`)}, ${lineId}, now())`;
      }
    };
    await order(1, 1, 1, 1, 4, 4); // completed: 4 units
    await order(2, 2, 1, 1, 3, 1); // refunded after 1 code of 3: 1 unit sold
    await order(3, 1, 1, 1, 2, 2, false); // a test order: no campaign's units
    await order(4, 2, 2, 2, 2, 0); // refunded before any code: none
    await order(5, 1, 2, 2, 6, 6); // more than its max_sell, as the reset let it sell
    await order(6, 1, 3, 3, 6, 6); // the same, on a service carrying its campaign

    await migrateDatabase(database.url);
    const memberships = await sql`select campaign_id, card_service_id, sold from campaign_card_services order by campaign_id`;
    expect(memberships).toEqual([
      { campaign_id: 1, card_service_id: 1, sold: 5 },
      { campaign_id: 2, card_service_id: 2, sold: 6 },
      { campaign_id: 3, card_service_id: 3, sold: 6 },
    ]);
    const services = await sql`select id, is_offered, offered_sell from card_services order by id`;
    expect(services).toEqual([
      { id: 1, is_offered: 1, offered_sell: 5 },
      { id: 2, is_offered: 0, offered_sell: 0 },
      { id: 3, is_offered: 1, offered_sell: 4 },
    ]);

    // Campaign 2 running again: its membership is past its cap, so it does not apply; service 3, at its cap, leaves
    // campaign 3 for good.
    await sql`update campaigns set status = 1 where id = 2`;
    await syncOn(database.url);
    expect(await sql`select id, is_offered, price from card_services where id = 2`).toEqual([{ id: 2, is_offered: 0, price: '20.00' }]);
    expect(await sql`select id, is_offered, price from card_services where id = 3`).toEqual([{ id: 3, is_offered: 0, price: '50.00' }]);
    expect((await sql`select left_at from campaign_card_services where campaign_id = 3`)[0]!.left_at).not.toBeNull();
    // Its max_sell raised to 8: it takes up from the 6 it sold, 2 left at its price.
    await sql`update campaign_card_services set max_sell = 8 where campaign_id = 2`;
    await syncOn(database.url);
    expect(await sql`select id, is_offered, max_sell, offered_sell from card_services where id = 2`).toEqual([{ id: 2, is_offered: 1, max_sell: 8, offered_sell: 6 }]);
  } finally {
    await sql.end({ timeout: 5 });
    await database.drop();
  }
});

/** One run of the campaign sync on the upgraded database, as the worker's timer runs it. */
async function syncOn(url: string): Promise<void> {
  const connection = connectDatabase(url, { max: 1 });
  try {
    await syncCampaigns(connection.db);
  } finally {
    await connection.close();
  }
}
