/** A store to sell from, buyers signed in over HTTP, a load of orders, and waiting for the store to settle. */
import type { Database } from '../../src/db/client.js';
import { createAccount, type AccountCredentials } from '../../src/modules/accounts/service.js';
import { addCodes } from '../../src/modules/inventory/service.js';
import { createCampaign, createCard, createTopUp } from './fixtures.js';
import { sleep } from './processes.js';

/** Where the service answers, and the key it seals card codes with (for codes added straight to the database). */
export type StoreFront = { baseUrl: string; codeKey: Buffer };

export type Store = {
  /** The card (`cardId`) and its services: `stocked` has plenty of codes, `scarce` runs out (stock_short), `campaign` sells campaign units. */
  cards: { cardId: number; stocked: number; scarce: number; campaign: number };
  topUp: { id: number; serviceId: number };
  /** The buyers' key pairs, and a token of each. */
  keys: AccountCredentials[];
  tokens: string[];
};

/** A small catalog, codes sealed with the service's key, and `buyers` accounts signed in over HTTP. */
export async function openStore(front: StoreFront, db: Database['db'], { buyers = 8, stocked = 400, scarce = 40 } = {}): Promise<Store> {
  const key = front.codeKey;
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
  const accounts: AccountCredentials[] = [];
  for (let i = 0; i < buyers; i++) {
    const keys = await createAccount(db, { firstname: 'Load', lastname: `Buyer ${i}`, currency: 'USD', currencySymbol: '$', balance: '100000.00' });
    const response = await fetch(`${front.baseUrl}/api/generate/authorization-token`, {
      method: 'POST',
      headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey },
    });
    tokens.push(((await response.json()) as { bearer_token: string }).bearer_token);
    accounts.push(keys);
  }
  return {
    cards: { cardId: card.id, stocked: a, scarce: b, campaign: c },
    topUp: { id: topUp.id, serviceId: topUp.services[0]!.id },
    keys: accounts,
    tokens,
  };
}

/**
 * `transportErrors`: requests without an answer (connection refused or reset, or none within 20 s), of which
 * `connectionFailures` were refused or cut off rather than left unanswered;
 * `unexpected`: the first few answers other than 200, 409 and 503 (502 too, behind a load balancer), with their
 * request, for a failing test's message; `samples`: the first few distinct bodies of each answer other than 200 (under 0, why requests got none).
 */
export type LoadResult = {
  accepted: string[];
  statuses: Record<number, number>;
  samples: Record<number, string[]>;
  transportErrors: number;
  connectionFailures: number;
  unexpected: string[];
};

export type LoadOptions = {
  /**
   * How many times a client sends an order again after a 502 or 503 or no answer, with the same Idempotency-Key
   * (C15), as a careful client does; 0 sends each order once, without a key.
   */
  retries?: number;
  /** Once aborted, no new order is started (those under way finish). */
  signal?: AbortSignal;
  /** Told of each order accepted, as soon as it is, with when its request was first sent. */
  onAccepted?: (utr: string, sentAt: number) => void;
};

/**
 * Places `orders` orders from `concurrency` clients at once: mostly card orders over the three services,
 * some top-ups. Returns the utrs the service accepted and how the requests were answered (every attempt counts).
 */
export async function placeOrders(
  front: Pick<StoreFront, 'baseUrl'>,
  store: Store,
  orders: number,
  concurrency = 16,
  { retries = 0, signal, onAccepted }: LoadOptions = {},
): Promise<LoadResult> {
  const result: LoadResult = { accepted: [], statuses: {}, samples: {}, transportErrors: 0, connectionFailures: 0, unexpected: [] };
  const expected = retries > 0 ? [200, 409, 502, 503] : [200, 409, 503];
  let next = 0;
  const sample = (status: number, text: string) => {
    const seen = (result.samples[status] ??= []);
    if (seen.length < 3 && !seen.includes(text)) seen.push(text);
  };
  const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const one = async (i: number) => {
    const token = store.tokens[i % store.tokens.length]!;
    const card = i % 5 !== 4;
    const services = [store.cards.stocked, store.cards.scarce, store.cards.campaign];
    const request = card
      ? { path: '/api/card/make-order', body: { service_ids: [services[i % 3]!], quantities: [1 + (i % 2)] } }
      : { path: '/api/top-up/make-order', body: { topUpId: store.topUp.id, serviceId: store.topUp.serviceId, player_id: `p${i}` } };
    const headers: Record<string, string> = { Authorization: token, 'Content-Type': 'application/json' };
    if (retries > 0) headers['Idempotency-Key'] = `load-${run}-${i}`;
    const sentAt = Date.now();
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(Math.min(200 * attempt, 1000));
      try {
        const response = await fetch(`${front.baseUrl}${request.path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(request.body),
          // A request that never gets its answer is a failure of its own, not a hung test.
          signal: AbortSignal.timeout(20_000),
        });
        const text = await response.text();
        result.statuses[response.status] = (result.statuses[response.status] ?? 0) + 1;
        if (!expected.includes(response.status) && result.unexpected.length < 5) {
          result.unexpected.push(`${response.status} ${text} for ${request.path} ${JSON.stringify(request.body)}`);
        }
        if (response.status === 200) {
          const body = JSON.parse(text) as { message: { utr?: string } | string };
          const utr = typeof body.message === 'string' ? /order number is (\w+)/.exec(body.message)?.[1] : body.message.utr;
          // An order's first 200 ends its attempts, so each utr comes once.
          if (utr) {
            result.accepted.push(utr);
            onAccepted?.(utr, sentAt);
          }
        } else {
          sample(response.status, text.slice(0, 300));
        }
        if (response.status !== 502 && response.status !== 503) return;
      } catch (err) {
        result.transportErrors += 1;
        if ((err as Error).name !== 'TimeoutError') result.connectionFailures += 1;
        sample(0, `${(err as Error).message} ${String((err as Error).cause ?? '')}`);
      }
    }
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < orders && !signal?.aborted) await one(next++);
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

