import { sql as dsql } from 'drizzle-orm';
import { encrypt } from '../../src/lib/crypto.js';
import { newWebhookSecret } from '../../src/lib/webhook-signature.js';
import postgres from 'postgres';
import type { Db, Sql } from '../../src/db/client.js';
import { ensureDatabase, migrateDatabase } from '../../src/db/migrate.js';
import {
  cardServices,
  cards,
  categories,
  currencies,
  gateways,
  priceTierPrices,
  priceTiers,
  topUpServices,
  topUps,
  type KeyScope,
  type OrderField,
} from '../../src/db/schema.js';
import { createKey } from '../../src/modules/accounts/keys.js';
import { createAccount, type AccountCredentials } from '../../src/modules/accounts/service.js';
import { sealCode } from '../../src/modules/inventory/codes.js';

/** What the scenarios need to know about the loaded catalog. */
export type Catalog = {
  topUps: Array<{ id: number; slug: string; serviceIds: number[] }>;
  cards: number[];
  cardServices: Array<{ id: number; cardId: number; price: string }>;
};

export const ORDER_FIELDS: OrderField[] = [
  { field_value: 'User Id', field_name: 'User_Id', field_placeholder: 'Enter your user id', field_note: '', field_type: 'text' },
  {
    field_value: 'Zone Name',
    field_name: 'Zone_Name',
    field_placeholder: 'Choose your zone',
    field_note: 'As shown in the game profile',
    field_type: 'select',
    option: { Asia: 'Asia', Europe: 'Europe', America: 'America' },
  },
];

export const OPENING_BALANCE = '100000000.00';

/** Drops and recreates the bench database, then applies the migrations as the service does at start. */
export async function resetDatabase(url: string): Promise<void> {
  await dropDatabase(url);
  await ensureDatabase(url);
  await migrateDatabase(url);
}

export async function dropDatabase(url: string): Promise<void> {
  const maintenance = new URL(url);
  const name = decodeURIComponent(maintenance.pathname.slice(1));
  maintenance.pathname = '/postgres';
  const admin = postgres(maintenance.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

const image = (name: string) => ({ image: `${name}.webp`, image_driver: 'local', preview: `${name}-preview.webp`, preview_driver: 'local' });

/** Categories, top-ups with order fields and services, cards with services, gateways. */
export async function loadCatalog(db: Db, size: { topUps: number; cards: number; servicesPerProduct: number }): Promise<Catalog> {
  const cats = await db
    .insert(categories)
    .values([
      ...['Mobile games', 'PC games', 'Streaming'].map((name, i) => ({ name, icon: 'fa-gamepad', type: 'top_up' as const, sortBy: i })),
      ...['Gift cards', 'Game cards', 'Prepaid'].map((name, i) => ({ name, icon: 'fa-gift', type: 'card' as const, sortBy: i })),
    ])
    .returning({ id: categories.id, type: categories.type });
  const topUpCats = cats.filter((c) => c.type === 'top_up');
  const cardCats = cats.filter((c) => c.type === 'card');

  const topUpRows = await db
    .insert(topUps)
    .values(
      Array.from({ length: size.topUps }, (_, i) => ({
        categoryId: topUpCats[i % topUpCats.length]!.id,
        name: `Game ${i + 1} Diamonds`,
        slug: `game-${i + 1}-diamonds`,
        region: i % 2 ? 'Asia' : 'Global',
        image: image(`top-up-${i + 1}`),
        orderInformation: ORDER_FIELDS,
        description: '<p>Top up your game account in seconds.</p>'.repeat(4),
        guide: '<ol><li>Enter your user id</li><li>Choose your zone</li><li>Pay</li></ol>',
        sortBy: i,
      })),
    )
    .returning({ id: topUps.id, slug: topUps.slug });
  const topUpServiceRows = await db
    .insert(topUpServices)
    .values(
      topUpRows.flatMap((t) =>
        Array.from({ length: size.servicesPerProduct }, (_, j) => ({
          topUpId: t.id,
          name: `${(j + 1) * 100} Diamonds`,
          price: `${(j + 1) * 1.99}`,
          discount: j % 2 ? '5' : '0.10',
          discountType: j % 2 ? ('percentage' as const) : ('flat' as const),
          sortBy: j,
        })),
      ),
    )
    .returning({ id: topUpServices.id, topUpId: topUpServices.topUpId });

  const cardRows = await db
    .insert(cards)
    .values(
      Array.from({ length: size.cards }, (_, i) => ({
        categoryId: cardCats[i % cardCats.length]!.id,
        name: `Store Card ${i + 1}`,
        slug: `store-card-${i + 1}`,
        image: image(`card-${i + 1}`),
        description: '<p>Redeem in the store.</p>'.repeat(4),
        guide: '<p>Open the store, choose redeem, paste the code.</p>',
        sortBy: i,
      })),
    )
    .returning({ id: cards.id });
  const cardServiceRows = await db
    .insert(cardServices)
    .values(
      cardRows.flatMap((c) =>
        Array.from({ length: size.servicesPerProduct }, (_, j) => ({
          cardId: c.id,
          name: `${(j + 1) * 10} USD`,
          price: `${(j + 1) * 10}.00`,
          discount: j % 2 ? '0.50' : '0',
          discountType: 'flat' as const,
          sortBy: j,
        })),
      ),
    )
    .returning({ id: cardServices.id, cardId: cardServices.cardId, price: cardServices.price });

  await db.insert(gateways).values(
    ['paypal', 'stripe', 'bank-transfer'].map((code, i) => ({
      code,
      name: code.replace('-', ' '),
      sortBy: i,
      currencies: { '0': { USD: 'USD' } },
      supportedCurrency: ['USD'],
      receivableCurrencies: [{ currency: 'USD', min_limit: '1', max_limit: '10000', percentage_charge: '2.5', fixed_charge: '0.30' }],
    })),
  );

  return {
    topUps: topUpRows.map((t) => ({ ...t, serviceIds: topUpServiceRows.filter((s) => s.topUpId === t.id).map((s) => s.id) })),
    cards: cardRows.map((c) => c.id),
    cardServices: cardServiceRows,
  };
}

/**
 * Accounts through the product's own createAccount (hashed keys, ledger-backed opening balance), with OPENING_BALANCE
 * each; `settings` puts them in another currency or on a price tier (C24), or gives them an address allow-list (C26).
 */
export async function createAccounts(
  db: Db,
  count: number,
  label: string,
  settings: { currency?: { code: string; symbol: string }; priceTierId?: number; allowedIps?: string[] } = {},
): Promise<AccountCredentials[]> {
  const accounts = await inBatches(count, 16, (i) =>
    createAccount(db, {
      firstname: 'Bench',
      lastname: `${label} ${i}`,
      username: `bench_${label}_${i}`,
      currency: settings.currency?.code ?? 'USD',
      currencySymbol: settings.currency?.symbol ?? '$',
      balance: OPENING_BALANCE,
    }),
  );
  const ids = () => dsql.param(accounts.map((a) => a.id));
  if (settings.priceTierId !== undefined) {
    await db.execute(dsql`update accounts set price_tier_id = ${settings.priceTierId} where id = any(${ids()}::int[])`);
  }
  if (settings.allowedIps !== undefined) {
    await db.execute(dsql`update accounts set allowed_ips = ${dsql.param(settings.allowedIps)}::text[] where id = any(${ids()}::int[])`);
  }
  return accounts;
}

/** A second key pair of `scope` for each account (C25/C26), through the product's own createKey. */
export async function createKeys(db: Db, accounts: AccountCredentials[], scope: KeyScope): Promise<KeyPair[]> {
  return inBatches(accounts.length, 16, async (i) => {
    const key = await createKey(db, accounts[i]!.id, { mode: 'live', scope });
    return { publicKey: key.public_key, secretKey: key.secret_key };
  });
}

/**
 * C24's prices for the priced accounts: EUR at a rate with 8 decimals, and a tier 7.5 % off with its own price for every
 * other service, so a tiered read and a converted order do all the arithmetic there is.
 */
export async function loadPrices(db: Db, catalog: Catalog): Promise<{ euro: { code: string; symbol: string }; tierId: number }> {
  await db.insert(currencies).values({ code: 'EUR', rate: '0.92345678', symbol: '€' });
  const [tier] = await db.insert(priceTiers).values({ name: 'Bench resellers', percentOff: '7.50' }).returning({ id: priceTiers.id });
  const own = <T>(ids: T[]) => ids.filter((_, i) => i % 2 === 0);
  const prices = [
    ...own(catalog.cardServices).map((s) => ({ tierId: tier!.id, cardServiceId: s.id, price: '9.99' })),
    ...own(catalog.topUps.flatMap((t) => t.serviceIds)).map((id) => ({ tierId: tier!.id, topUpServiceId: id, price: '4.44' })),
  ];
  await db.insert(priceTierPrices).values(prices);
  return { euro: { code: 'EUR', symbol: '€' }, tierId: tier!.id };
}

/** Published reviews on every product from the first accounts, with the product counters kept in step. */
export async function loadReviews(db: Db, accountIds: number[]): Promise<void> {
  const reviewers = dsql.raw(`array[${accountIds.map(Number).join(',')}]`);
  for (const [kind, table] of [
    ['top_up', 'top_ups'],
    ['card', 'cards'],
  ] as const) {
    await db.execute(dsql`
      insert into reviews (account_id, reviewable_type, reviewable_id, rating, comment)
      select a, ${kind}, p.id, 3 + (p.id + a) % 3, 'Delivered in seconds, would buy again.'
      from ${dsql.raw(table)} p cross join unnest(${reviewers}) a`);
    await db.execute(dsql`
      update ${dsql.raw(table)} p set total_review = r.n, avg_rating = r.avg
      from (select reviewable_id, count(*) n, round(avg(rating), 2) avg from reviews
            where reviewable_type = ${kind} group by reviewable_id) r
      where r.reviewable_id = p.id`);
  }
}

const POOL_SIZE = 1000;

/**
 * `perService` unassigned codes for every card service, inserted with generate_series.
 * Ciphertexts come from a pool of codes really sealed with the service's key (so any code
 * decrypts), digests are unique per row: sealing a million codes in JS would dominate the run.
 */
export async function loadCodes(sql: Sql, key: Buffer, perService: number, label: string): Promise<void> {
  await sql.begin(async (tx) => {
    await createCodePool(tx, key, label);
    await tx`
      insert into card_codes (card_service_id, code_encrypted, code_digest)
      select s.id, p.enc, sha256(convert_to(${label} || ':' || s.id || ':' || g, 'UTF8'))
      from card_services s
      cross join generate_series(1, ${perService}::int) g
      join code_pool p on p.n = g % ${POOL_SIZE}
      order by s.id, g`;
  });
  await settle(sql, 'card_codes');
}

/**
 * `orders` completed card orders of each account of `accountIds` (one line, one delivered code each), one every five
 * minutes back from now, for order-list figures over a long history.
 */
export async function loadOrderHistory(sql: Sql, key: Buffer, accountIds: number[], orders: number): Promise<void> {
  await sql.begin(async (tx) => {
    await createCodePool(tx, key, 'history');
    // Orders go round the card services; the utr carries the service id to the line insert.
    await tx`
      with service as (select id, card_id, price, row_number() over (order by id) - 1 as rn, count(*) over () as n from card_services),
      o as (
        insert into orders (utr, account_id, kind, status, total, currency, currency_symbol, created_at, updated_at, completed_at)
        select 'H' || a.id || '-' || g || '-' || s.id, a.id, 'card', 1, s.price, 'USD', '$',
               now() - g * interval '5 minutes', now() - g * interval '5 minutes', now() - g * interval '5 minutes' + interval '1 second'
        from unnest(${accountIds}::int[]) a(id) cross join generate_series(1, ${orders}::int) g join service s on s.rn = g % s.n
        returning id, utr, created_at
      ),
      l as (
        insert into order_lines (order_id, card_service_id, card_id, quantity, base_price, discount, unit_price, line_total, created_at)
        select o.id, s.id, s.card_id, 1, s.price, 0, s.price, s.price, o.created_at
        from o join service s on s.id = split_part(o.utr, '-', 3)::int
        returning id, card_service_id, created_at
      )
      insert into card_codes (card_service_id, code_encrypted, code_digest, order_line_id, assigned_at)
      select l.card_service_id, p.enc, sha256(convert_to('history:' || l.id, 'UTF8')), l.id, l.created_at
      from l join code_pool p on p.n = l.id % ${POOL_SIZE}`;
    // Placement keeps this count; the order list reads its total from it.
    await tx`update accounts set card_order_count = card_order_count + ${orders} where id = any(${accountIds}::int[])`;
  });
  await settle(sql, 'orders, order_lines, card_codes');
}

/**
 * After a bulk load: VACUUM ANALYZE, as autovacuum would have done long before a shop holds that much, and a
 * CHECKPOINT, so the load's dirty pages are written now rather than by the checkpointer during the next measurement.
 */
async function settle(sql: Sql, tables: string): Promise<void> {
  await sql.unsafe(`vacuum analyze ${tables}`);
  await sql`checkpoint`;
}

async function createCodePool(tx: postgres.TransactionSql, key: Buffer, label: string): Promise<void> {
  await tx`create temp table code_pool (n int primary key, enc bytea not null) on commit drop`;
  const rows = Array.from({ length: POOL_SIZE }, (_, n) => ({
    n,
    enc: sealCode(key, `${label.toUpperCase()}-${n.toString().padStart(6, '0')}-XXXX`).codeEncrypted,
  }));
  await tx`insert into code_pool ${tx(rows, 'n', 'enc')}`;
}

/** What the token endpoint exchanges: an account's first key pair or one made by createKeys. */
export type KeyPair = Pick<AccountCredentials, 'publicKey' | 'secretKey'>;

/** Bearer tokens through the public token endpoint. */
export async function issueTokens(baseUrl: string, accounts: KeyPair[]): Promise<string[]> {
  return inBatches(accounts.length, 16, async (i) => {
    const res = await fetch(`${baseUrl}/api/generate/authorization-token`, {
      method: 'POST',
      headers: { PublicKey: accounts[i]!.publicKey, SecretKey: accounts[i]!.secretKey },
    });
    const body = (await res.json()) as { bearer_token?: string };
    if (!res.ok || !body.bearer_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
    return body.bearer_token;
  });
}

/** Runs `task(0..count-1)` with at most `parallel` in flight, results in index order. */
async function inBatches<T>(count: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** One webhook endpoint per account, all at `url` (a receiver in the bench process). */
export async function registerEndpoints(sql: Sql, key: Buffer, accountIds: number[], url: string): Promise<void> {
  const sealed = encrypt(key, newWebhookSecret());
  await sql`
    insert into webhook_endpoints (account_id, url, secret_sealed)
    select id, ${url}, ${sealed} from unnest(${accountIds}::int[]) as id`;
}
