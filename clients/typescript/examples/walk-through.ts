/**
 * The README's walk-through with the TypeScript client: the catalog, a card order and a top-up order, their
 * completion, the codes, the statement, a webhook endpoint, and the errors a reseller handles.
 *
 *   STORE_URL=http://localhost:3000 PUBLICKEY=pk_… SECRETKEY=sk_… node --import tsx examples/walk-through.ts
 *
 * (`npm run -s seed -- --json` prints the demo account's keys.) `npm test` runs it against a fresh `npm start`.
 */
import { createStoreClient, isStoreError, utrOfTopUpOrder, type Order } from '@topup-store/client';

const store = createStoreClient({
  baseUrl: process.env.STORE_URL ?? 'http://localhost:3000',
  publicKey: process.env.PUBLICKEY!,
  secretKey: process.env.SECRETKEY!,
});

// 1. The catalog: the token is exchanged on the first call and renewed before it expires.
const { data: categories } = await store.GET('/api/get-category');
console.log('categories:', categories.message.categories.map((category) => category.name).join(', '));
const { data: services } = await store.GET('/api/card/services', { params: { query: { card_id: 1 } } });
const steam = services.message.services[0]!;
console.log(`card service ${steam.id}: ${steam.name}`);

// 2. Orders: each gets its own Idempotency-Key, kept across retries, so a lost answer never places a second order.
const { data: cardOrder } = await store.POST('/api/card/make-order', { body: { service_ids: [steam.id], quantities: [2] } });
const { data: topUpOrder } = await store.POST('/api/top-up/make-order', {
  body: { topUpId: 1, serviceId: 1, player_id: '5123456789', server: 'global' },
});
console.log('placed:', cardOrder.message.utr, utrOfTopUpOrder(topUpOrder.message));

// 3. Workers fulfil orders in the background: poll until the card order leaves `initiate` (a webhook says so
//    without polling). The demo's top-ups have no supplier, so that order waits for an operator.
async function settled(utr: string): Promise<Order> {
  for (let waited = 0; ; waited += 200) {
    const { data } = await store.GET('/api/order/details', { params: { query: { utr } } });
    if (data.message.status !== 0 || waited >= 30_000) return data.message;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
const order = await settled(cardOrder.message.utr);
const codes = order.order_details.flatMap((line) => ('card_codes' in line ? line.card_codes : []));
console.log(`${cardOrder.message.utr}: ${order.status_label}, ${codes.length} codes`);

// 4. The statement: every balance move, newest first.
const { data: statement } = await store.GET('/api/account/statement');
for (const entry of statement.message.data.slice(0, 2)) console.log(`statement: ${entry.kind} ${entry.amount} → ${entry.balance_after} ${entry.currency}`);

// 5. Errors arrive as one StoreError with a kind, the store's messages and its request id.
try {
  await store.POST('/api/card/make-order', { body: { service_ids: [steam.id], quantities: [1], max_price: '0.01' } });
} catch (error) {
  if (!isStoreError(error, 'above_max_price')) throw error;
  console.log(`refused (${error.kind}, ${error.status}): ${error.messages[0]}`);
}
