/** What the fault tests share: a store to sell from, buyers, a load of orders, and waiting for the store to settle. */
import { Queue } from 'bullmq';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { createAccount } from '../../src/modules/accounts/service.js';
import { addCodes } from '../../src/modules/inventory/service.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { createTestDatabase } from '../helpers/harness.js';
import { createCampaign, createCard, createTopUp } from '../helpers/fixtures.js';
import { sleep } from '../helpers/processes.js';

export type Store = {
  /** Card services: `stocked` has plenty of codes, `scarce` runs out (stock_short), `campaign` sells campaign units. */
  cards: { stocked: number; scarce: number; campaign: number };
  topUp: { id: number; serviceId: number };
  tokens: string[];
};

/** A small catalog, codes sealed with the cluster's key, and `buyers` accounts signed in over HTTP. */
async function openStore(cluster: Cluster, db: Database['db'], { buyers = 8, stocked = 400, scarce = 40 } = {}): Promise<Store> {
  const key = Buffer.from(cluster.env.CODE_ENCRYPTION_KEY!, 'hex');
  const card = await createCard(db, { services: [{ price: '2.00' }, { price: '3.00' }, { price: '4.00' }] });
  const [a, b, c] = card.services.map((s) => s.id) as [number, number, number];
  await createCampaign(db, { cardServices: [{ serviceId: c, price: '3.00', maxSell: 25 }] });
  const codes = (service: number, n: number) => Array.from({ length: n }, (_, i) => `F-${service}-${i}-${Math.random().toString(36).slice(2)}`);
  await addCodes(db, key, a, codes(a, stocked));
  await addCodes(db, key, b, codes(b, scarce));
  await addCodes(db, key, c, codes(c, stocked));
  const topUp = await createTopUp(db, {
    orderFields: [{ field_value: 'Player ID', field_name: 'player_id', field_placeholder: '', field_note: '', field_type: 'text' }],
  });
  const tokens: string[] = [];
  for (let i = 0; i < buyers; i++) {
    const keys = await createAccount(db, { firstname: 'Load', lastname: `Buyer ${i}`, currency: 'USD', currencySymbol: '$', balance: '100000.00' });
    const response = await fetch(`${cluster.baseUrl}/api/generate/authorization-token`, {
      method: 'POST',
      headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
    });
    tokens.push(((await response.json()) as { bearer_token: string }).bearer_token);
  }
  return { cards: { stocked: a, scarce: b, campaign: c }, topUp: { id: topUp.id, serviceId: topUp.services[0]!.id }, tokens };
}

/**
 * `transportErrors`: requests without an answer (connection refused or reset, or none within 20 s);
 * `unexpected`: the first few answers other than 200, 409 and 503, with their request, for a failing test's message.
 */
export type LoadResult = { accepted: string[]; statuses: Record<number, number>; transportErrors: number; unexpected: string[] };

/**
 * Places `orders` orders from `concurrency` clients at once: mostly card orders over the three services,
 * some top-ups. Returns the utrs the service accepted and how the other requests were answered.
 */
export async function placeOrders(cluster: Cluster, store: Store, orders: number, concurrency = 16): Promise<LoadResult> {
  const result: LoadResult = { accepted: [], statuses: {}, transportErrors: 0, unexpected: [] };
  let next = 0;
  const one = async (i: number) => {
    const token = store.tokens[i % store.tokens.length]!;
    const card = i % 5 !== 4;
    const services = [store.cards.stocked, store.cards.scarce, store.cards.campaign];
    const request = card
      ? { path: '/api/card/make-order', body: { service_ids: [services[i % 3]!], quantities: [1 + (i % 2)] } }
      : { path: '/api/top-up/make-order', body: { topUpId: store.topUp.id, serviceId: store.topUp.serviceId, player_id: `p${i}` } };
    try {
      const response = await fetch(`${cluster.baseUrl}${request.path}`, {
        method: 'POST',
        headers: { Authorization: token, 'Content-Type': 'application/json' },
        body: JSON.stringify(request.body),
        // A request that never gets its answer is a failure of its own, not a hung test.
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      const body = JSON.parse(text) as { message: { utr?: string } | string };
      result.statuses[response.status] = (result.statuses[response.status] ?? 0) + 1;
      if (![200, 409, 503].includes(response.status) && result.unexpected.length < 5) {
        result.unexpected.push(`${response.status} ${text} for ${request.path} ${JSON.stringify(request.body)}`);
      }
      if (response.status === 200) {
        const utr = typeof body.message === 'string' ? /order number is (\w+)/.exec(body.message)?.[1] : body.message.utr;
        if (utr) result.accepted.push(utr);
      }
    } catch {
      result.transportErrors += 1;
    }
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < orders) await one(next++);
    }),
  );
  return result;
}

/**
 * Waits until the store has nothing left to do by itself: no card order in `initiate`, no top-up in
 * `initiate` that is not with an operator, and no `stock_short` order whose service has free codes.
 */
export async function settled(sql: Database['sql'], timeoutMs = 120_000, context: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await sql<{ id: string; utr: string; kind: string; status: number; created_at: string; updated_at: string }[]>`
      select id, utr, kind, status, created_at::text, updated_at::text from orders o
      where (status = 0 and awaiting_operator_since is null)
         or (status = 3 and exists (
              select 1 from order_lines l
              where l.order_id = o.id and l.codes_owed > 0
                and exists (select 1 from card_codes c where c.card_service_id = l.card_service_id and c.order_line_id is null)))
      order by id limit 10`;
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      // Which orders, and how far they got, for the failing test's message.
      throw new Error(`the store did not settle: orders still to move on (at most 10 shown)\n${JSON.stringify(pending)}\n${context()}`);
    }
    await sleep(250);
  }
}

/** A database handle for the test itself (fixtures and checks), next to the cluster's own connections. */
const testDatabase = (url: string) => connectDatabase(url, { max: 4, applicationName: 'topup-fault-test' });

/** What a fault test works on: its own database, the service's processes on it, a store to sell from. */
export type Scene = {
  database: Awaited<ReturnType<typeof createTestDatabase>>;
  db: Database;
  cluster: Cluster;
  store: Store;
  /** Buffer form of the cluster's code key, for codes added straight to the database. */
  codeKey: Buffer;
  /** The queue `name` of the cluster, from the test's side (close it after use). */
  queue: (name: string) => Queue;
  close: () => Promise<void>;
};

export async function openScene(options: {
  workers?: number;
  env?: Record<string, string>;
  redisUrl?: string;
  /** The URL the service connects through (a proxy in front of the database, say); the database's own by default. */
  serviceDatabaseUrl?: (url: string) => Promise<string>;
  store?: Parameters<typeof openStore>[2];
}): Promise<Scene> {
  const database = await createTestDatabase();
  const db = testDatabase(database.url);
  const redisUrl = options.redisUrl ?? inject('redisUrl');
  const cluster = await startCluster({
    databaseUrl: options.serviceDatabaseUrl ? await options.serviceDatabaseUrl(database.url) : database.url,
    redisUrl,
    workers: options.workers ?? 1,
    env: options.env,
  });
  const store = await openStore(cluster, db.db, options.store);
  return {
    database,
    db,
    cluster,
    store,
    codeKey: Buffer.from(cluster.env.CODE_ENCRYPTION_KEY!, 'hex'),
    queue: (name) => new Queue(name, { connection: { url: redisUrl }, prefix: cluster.env.BULLMQ_PREFIX }),
    close: async () => {
      await cluster.stop();
      await db.close();
      await database.drop();
    },
  };
}
