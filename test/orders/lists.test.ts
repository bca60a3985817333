import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buyer, client, expectFailure, expectJson, ISO_MICROS, type Json } from '../helpers/api.js';
import { createCard, createReview, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { planOf, timesRead, walkPlan, type PlanNode } from '../helpers/query-plans.js';
import { cardCodes } from '../../src/db/schema.js';
import { sealCode } from '../../src/modules/inventory/codes.js';
import { ORDER_STATUS, transitionOrder } from '../../src/modules/order-state/state.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const PAGE_KEYS = [
  'current_page', 'data', 'first_page_url', 'from', 'last_page', 'last_page_url', 'links',
  'next_page_url', 'path', 'per_page', 'prev_page_url', 'to', 'total',
].sort();
const ORDER_KEYS = ['currency', 'dateTime', 'informations', 'order_details', 'price', 'review_user_info', 'status', 'status_label', 'symbol', 'utr'].sort();

const orderFields = [
  { field_value: 'Player ID', field_name: 'User_Id', field_placeholder: '', field_note: '', field_type: 'text' as const },
];

async function page(api: ReturnType<typeof client>, path: string): Promise<Json> {
  const body = await expectJson(await api.get(path), 200);
  expect(body.status).toBe('success');
  expect(Object.keys(body.message).sort()).toEqual(PAGE_KEYS);
  return body.message;
}

describe('A15 get-topup/orders', () => {
  it('lists the caller\'s top-up orders field by field, with the caller\'s review', async () => {
    const { keys, api } = await buyer(app);
    const topUp = await createTopUp(app.services.db, {
      name: 'Diamonds',
      orderFields,
      services: [{ name: '100 Diamonds', price: '20.00', discount: '5', discountType: 'percentage' }],
    });
    const placed = await expectJson(
      await api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id), User_Id: 'p-42' }),
      200,
    );
    const utr = /number is (\S+)\.$/.exec(placed.message)![1]!;
    await createReview(app.services.db, { accountId: keys.id, kind: 'top_up', productId: topUp.id, rating: 4, comment: 'Fast.', status: 0 });

    for (const path of ['/api/get-topup/orders', '/api/topUp/order']) {
      const list = await page(api, path);
      expect(list).toMatchObject({ current_page: 1, from: 1, to: 1, total: 1, per_page: 10, last_page: 1 });
      expect(list.path).toBe(`${app.baseUrl}${path}`);
      expect(list.data).toHaveLength(1);
      const order = list.data[0];
      expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
      expect(order).toEqual({
        utr,
        price: 19,
        currency: 'USD',
        symbol: '$',
        status: 0,
        status_label: 'initiate',
        dateTime: expect.stringMatching(ISO_MICROS),
        order_details: [
          {
            utr,
            rating: 0,
            image: `${app.baseUrl}/assets/topups/${topUp.slug}.webp`,
            discount: 1,
            quantity: 1,
            name: 'Diamonds',
            service: '100 Diamonds',
            base_price: 20,
            currency: 'USD',
            symbol: '$',
            slug: topUp.slug,
          },
        ],
        informations: { 'Player ID': 'p-42' },
        review_user_info: [{ review: { comment: 'Fast.', rating: 4, status: 'inactive' } }],
      });
    }
  });

  it('shows the status after a transition and no review entry when the caller has none', async () => {
    const { api } = await buyer(app);
    const topUp = await createTopUp(app.services.db);
    await expectJson(await api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id }), 200);
    const [order] = await app.services.sql`select id from orders where top_up_id = ${topUp.id}`;
    expect(await transitionOrder(app.services.db, Number(order!.id), ORDER_STATUS.completed)).not.toBeNull();
    const list = await page(api, '/api/get-topup/orders');
    expect(list.data[0]).toMatchObject({ status: 1, status_label: 'completed', informations: {}, review_user_info: [] });
  });
});

describe('A16 get-card/orders', () => {
  it('lists card orders with delivered codes decrypted and what is still owed', async () => {
    const { keys, api } = await buyer(app);
    const card = await createCard(app.services.db, { name: 'Gift', services: [{ name: '10 USD', price: '10.00', discount: '1.00' }] });
    const service = card.services[0]!;
    const placed = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [service.id], quantities: [3] }), 200);
    const utr = placed.message.utr as string;
    // Deliver one code of three, as fulfilment does.
    const [line] = await app.services.sql`select l.id, l.order_id from order_lines l join orders o on o.id = l.order_id where o.utr = ${utr}`;
    const key = app.services.config.codeEncryptionKey;
    await app.services.db.insert(cardCodes).values({ cardServiceId: service.id, ...sealCode(key, 'CODE-AAA-1'), orderLineId: Number(line!.id) });
    await app.services.sql`update order_lines set codes_owed = 2 where id = ${line!.id}`;
    await transitionOrder(app.services.db, Number(line!.order_id), ORDER_STATUS.stock_short);
    await createReview(app.services.db, { accountId: keys.id, kind: 'card', productId: card.id, rating: 5, comment: 'Works.' });

    for (const path of ['/api/get-card/orders', '/api/card/order']) {
      const list = await page(api, path);
      expect(list.data).toHaveLength(1);
      expect(list.data[0]).toEqual({
        utr,
        price: 27,
        currency: 'USD',
        symbol: '$',
        status: 3,
        status_label: 'stock_short',
        dateTime: expect.stringMatching(ISO_MICROS),
        order_details: [
          {
            utr,
            id: card.id,
            rating: 0,
            image: `${app.baseUrl}/assets/cards/${card.slug}.webp`,
            card: 'Gift',
            slug: card.slug,
            service: '10 USD',
            base_price: 10,
            currency: 'USD',
            symbol: '$',
            discount: 1,
            quantity: 3,
            card_codes: ['CODE-AAA-1'],
            stock_short: '2 codes will be sent as soon as stock arrives.',
          },
        ],
        informations: [],
        review_user_info: [{ review: { comment: 'Works.', rating: 5, status: 'active' } }],
      });
    }
  });

  it('pages newest first, 10 per page by default, per_page up to 100', async () => {
    const { api } = await buyer(app);
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const utrs: string[] = [];
    for (let i = 0; i < 12; i++) {
      const body = await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
      utrs.unshift(body.message.utr);
    }
    const first = await page(api, '/api/get-card/orders');
    expect(first).toMatchObject({ current_page: 1, per_page: 10, total: 12, last_page: 2, from: 1, to: 10, prev_page_url: null });
    expect(first.data.map((o: Json) => o.utr)).toEqual(utrs.slice(0, 10));
    // The next page reads on from this page's last order (keyset); a plain page=2 reads the same orders.
    expect(first.next_page_url).toBe(`${app.baseUrl}/api/get-card/orders?page=2&after=${utrs[9]}`);
    expect((await page(api, '/api/get-card/orders?page=2')).data).toEqual((await page(api, `/api/get-card/orders?page=2&after=${utrs[9]}`)).data);
    const second = await page(api, '/api/get-card/orders?page=2');
    expect(second.data.map((o: Json) => o.utr)).toEqual(utrs.slice(10));
    expect(second).toMatchObject({ from: 11, to: 12, next_page_url: null });
    const wide = await page(api, '/api/get-card/orders?per_page=500');
    expect(wide).toMatchObject({ per_page: 100, last_page: 1 });
    expect(wide.data).toHaveLength(12);
    const beyond = await page(api, '/api/get-card/orders?page=9');
    expect(beyond).toMatchObject({ data: [], from: null, to: null, total: 12 });
    expect(await expectFailure(await api.get('/api/get-card/orders?page=0'), 422)).toEqual(['The page field must be a positive integer.']);
  });
});

describe('order lists: next_page_url reads on from the last order of the page (keyset)', () => {
  const utrsOf = (list: Json) => list.data.map((o: Json) => o.utr as string);
  const pathOf = (url: string) => url.slice(app.baseUrl.length);

  it('walks every page by next_page_url to the same orders as page numbers, and keeps its place when orders are placed meanwhile', async () => {
    const { api } = await buyer(app);
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const place = async () => (await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200)).message.utr as string;
    const placed: string[] = [];
    for (let i = 0; i < 23; i++) placed.unshift(await place());

    const walked: string[] = [];
    let url: string | null = `${app.baseUrl}/api/get-card/orders?per_page=5`;
    for (let n = 1; url; n++) {
      const list = await page(api, pathOf(url));
      expect(list).toMatchObject({ current_page: n, total: 23, last_page: 5, from: (n - 1) * 5 + 1 });
      // The same page by its number alone.
      expect(utrsOf(list)).toEqual(utrsOf(await page(api, `/api/get-card/orders?per_page=5&page=${n}`)));
      // Only the way forward carries the cursor: the page links and the way back count from the newest order.
      for (const link of [list.prev_page_url, list.first_page_url, list.last_page_url, ...list.links.filter((l: Json) => l.label !== 'Next &raquo;').map((l: Json) => l.url)]) {
        if (link) expect(link).not.toContain('after=');
      }
      if (list.next_page_url) expect(list.next_page_url).toBe(`${app.baseUrl}/api/get-card/orders?per_page=5&page=${n + 1}&after=${utrsOf(list).at(-1)}`);
      walked.push(...utrsOf(list));
      url = list.next_page_url;
    }
    expect(walked).toEqual(placed);

    // An order placed between two pages: the cursor's page is the one the caller was about to see, the numbered one shifts.
    const first = await page(api, '/api/get-card/orders?per_page=5');
    const newest = await place();
    expect(utrsOf(await page(api, pathOf(first.next_page_url)))).toEqual(placed.slice(5, 10));
    expect(utrsOf(await page(api, '/api/get-card/orders?per_page=5&page=2'))).toEqual([placed[4], ...placed.slice(5, 9)]);
    expect(newest).not.toBe(placed[0]);
  });

  it("leaves aside a cursor that is not an order of the list: another account's, the other kind's, unknown", async () => {
    const me = await buyer(app);
    const other = await buyer(app);
    const card = await createCard(app.services.db, { services: [{ price: '1.00' }] });
    const order = async (api: typeof me.api) =>
      (await expectJson(await api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200)).message.utr as string;
    const mine: string[] = [];
    for (let i = 0; i < 4; i++) mine.unshift(await order(me.api));
    const theirs = await order(other.api);
    const byNumber = utrsOf(await page(me.api, '/api/get-card/orders?per_page=2&page=2'));
    expect(byNumber).toEqual(mine.slice(2, 4));
    for (const after of [theirs, 'C0NOSUCHORDER000000000000', mine[0]!.toLowerCase()]) {
      expect(utrsOf(await page(me.api, `/api/get-card/orders?per_page=2&page=2&after=${after}`)), after).toEqual(byNumber);
    }
    // A card order's utr is no cursor of the top-up list (nor a top-up's of the card list): page numbers count there.
    const topUp = await createTopUp(app.services.db, { orderFields, services: [{ price: '1.00' }] });
    for (let i = 0; i < 3; i++) {
      await expectJson(await me.api.postForm('/api/top-up/make-order', { topUpId: String(topUp.id), serviceId: String(topUp.services[0]!.id), User_Id: `p-${i}` }), 200);
    }
    const topUps = utrsOf(await page(me.api, '/api/get-topup/orders?per_page=2&page=2'));
    expect(topUps).toHaveLength(1);
    expect(utrsOf(await page(me.api, `/api/get-topup/orders?per_page=2&page=2&after=${mine[0]}`))).toEqual(topUps);
    const newestTopUp = utrsOf(await page(me.api, '/api/get-topup/orders?per_page=1'))[0];
    expect(utrsOf(await page(me.api, `/api/get-card/orders?per_page=2&page=2&after=${newestTopUp}`))).toEqual(byNumber);
    // Someone else's utr as a cursor reveals nothing: the caller sees its own page.
    expect(utrsOf(await page(other.api, `/api/get-card/orders?after=${mine[1]}`))).toEqual([theirs]);
    expect((await me.api.get('/api/get-card/orders?after=')).status).toBe(422);
  });
});

describe('A16 get-card/orders in one statement', () => {
  /** Delivers `codes` to the line of `utr` for `serviceId`, as fulfilment does (sealed, in this order). */
  async function deliver(utr: string, serviceId: number, codes: string[]) {
    const [line] = await app.services.sql`
      select l.id from order_lines l join orders o on o.id = l.order_id where o.utr = ${utr} and l.card_service_id = ${serviceId}`;
    const key = app.services.config.codeEncryptionKey;
    for (const code of codes) await app.services.db.insert(cardCodes).values({ cardServiceId: serviceId, ...sealCode(key, code), orderLineId: Number(line!.id) });
    await app.services.sql`update order_lines set codes_owed = codes_owed - ${codes.length} where id = ${line!.id}`;
  }

  /** The statements the service sends while `work` runs, with their values. */
  async function sentDuring(work: () => Promise<unknown>): Promise<Array<{ text: string; params: unknown[] }>> {
    const spy = vi.spyOn(app.services.sql, 'unsafe');
    try {
      await work();
      return spy.mock.calls.map(([text, params]) => ({ text: String(text), params: (params ?? []) as unknown[] }));
    } finally {
      spy.mockRestore();
    }
  }

  /** The texts of the statements the service sends while `work` runs. */
  const statementsDuring = async (work: () => Promise<unknown>) => (await sentDuring(work)).map(({ text }) => text);

  /** The order list's statement among those sent while `work` runs (the one that reads order_lines). */
  async function listingDuring(work: () => Promise<unknown>): Promise<{ text: string; params: unknown[] }> {
    const listing = (await sentDuring(work)).find(({ text }) => /\border_lines\b/.test(text));
    expect(listing).toBeDefined();
    return listing!;
  }

  /** The plan of `statement` under `settings` (SET LOCAL, e.g. `enable_nestloop = off`), analyzed if asked. */
  const planUnder = (settings: string[], { text, params }: { text: string; params: unknown[] }, options?: { analyze?: boolean }) =>
    app.services.sql.begin(async (tx) => {
      for (const setting of settings) await tx.unsafe(`set local ${setting}`);
      return planOf(tx, text, params, options);
    });

  it('pages orders of several lines with several codes each, with one statement per page', async () => {
    const me = await buyer(app);
    const other = await buyer(app);
    const gift = await createCard(app.services.db, { name: 'Gift', services: [{ name: 'Small', price: '5.00' }, { name: 'Large', price: '20.00' }] });
    const game = await createCard(app.services.db, { name: 'Game', services: [{ name: 'Month', price: '8.00' }] });
    const [small, large] = gift.services as [(typeof gift.services)[number], (typeof gift.services)[number]];
    const month = game.services[0]!;
    const place = async (api: typeof me.api, serviceIds: number[], quantities: number[]) =>
      (await expectJson(await api.postJson('/api/card/make-order', { service_ids: serviceIds, quantities }), 200)).message.utr as string;

    const first = await place(me.api, [small.id], [1]);
    const wide = await place(me.api, [large.id, month.id, small.id], [3, 1, 2]);
    const last = await place(me.api, [month.id], [2]);
    const theirs = await place(other.api, [large.id, month.id], [1, 1]);
    await deliver(wide, large.id, ['L-1', 'L-2', 'L-3']);
    await deliver(wide, small.id, ['S-1']);
    await deliver(first, small.id, ['F-1']);
    await deliver(theirs, large.id, ['THEIRS-1']);
    await createReview(app.services.db, { accountId: me.keys.id, kind: 'card', productId: gift.id, rating: 3, comment: 'Mine.' });
    await createReview(app.services.db, { accountId: other.keys.id, kind: 'card', productId: game.id, rating: 1, comment: 'Theirs.' });

    let firstPage: Json = {};
    const statements = await statementsDuring(async () => (firstPage = await page(me.api, '/api/get-card/orders?per_page=2')));
    expect(statements.filter((text) => /\borders\b/.test(text))).toHaveLength(1);
    expect(firstPage).toMatchObject({ total: 3, per_page: 2, last_page: 2, from: 1, to: 2 });
    expect(firstPage.data.map((o: Json) => o.utr)).toEqual([last, wide]);
    const [lastOrder, wideOrder] = firstPage.data;
    expect(lastOrder.order_details).toMatchObject([{ card: 'Game', service: 'Month', quantity: 2, card_codes: [], stock_short: '2 codes will be sent as soon as stock arrives.' }]);
    expect(lastOrder.review_user_info).toEqual([]);
    // Lines in the order they were placed, each with its own codes in delivery order.
    expect(wideOrder.order_details.map((l: Json) => [l.id, l.service, l.quantity, l.base_price, l.card_codes, l.stock_short])).toEqual([
      [gift.id, 'Large', 3, 20, ['L-1', 'L-2', 'L-3'], ''],
      [game.id, 'Month', 1, 8, [], '1 code will be sent as soon as stock arrives.'],
      [gift.id, 'Small', 2, 5, ['S-1'], '1 code will be sent as soon as stock arrives.'],
    ]);
    expect(wideOrder.order_details.every((l: Json) => l.utr === wide)).toBe(true);
    expect(wideOrder).toMatchObject({ price: 78, status: 0, status_label: 'initiate', informations: [] });
    // One entry per reviewed product, the caller's own only.
    expect(wideOrder.review_user_info).toEqual([{ review: { comment: 'Mine.', rating: 3, status: 'active' } }]);

    const second = await page(me.api, '/api/get-card/orders?per_page=2&page=2');
    expect(second).toMatchObject({ total: 3, from: 3, to: 3, next_page_url: null });
    expect(second.data.map((o: Json) => [o.utr, o.order_details[0].card_codes])).toEqual([[first, ['F-1']]]);
    const beyond = await page(me.api, '/api/get-card/orders?per_page=2&page=3');
    expect(beyond).toMatchObject({ data: [], from: null, to: null, total: 3, last_page: 2 });
    const single = await page(me.api, '/api/get-card/orders?per_page=1&page=3');
    expect(single).toMatchObject({ total: 3, last_page: 3, from: 3, to: 3, next_page_url: null });
    expect(single.data.map((o: Json) => o.utr)).toEqual([first]);

    // The other account sees its own order and codes only.
    const theirsList = await page(other.api, '/api/get-card/orders');
    expect(theirsList.data.map((o: Json) => o.utr)).toEqual([theirs]);
    expect(theirsList.data[0].order_details.map((l: Json) => l.card_codes)).toEqual([['THEIRS-1'], []]);
    expect(theirsList.data[0].review_user_info).toEqual([{ review: { comment: 'Theirs.', rating: 1, status: 'active' } }]);

    // The order details read the same entry, also in one statement.
    let details: Json = {};
    const lookups = await statementsDuring(async () => (details = await expectJson(await me.api.get(`/api/order/details?utr=${wide}`), 200)));
    expect(lookups.filter((text) => /\borders\b/.test(text))).toHaveLength(1);
    expect(details.message).toEqual(wideOrder);
    expect(await expectFailure(await other.api.get(`/api/order/details?utr=${wide}`), 404)).toBe(`No order with the utr "${wide}".`);
  });

  it('reads the pages of concurrent callers together, each caller getting its own page and codes', async () => {
    const card = await createCard(app.services.db, { name: 'Crowd', services: [{ name: 'One', price: '1.00' }] });
    const serviceId = card.services[0]!.id;
    const callers = await Promise.all(Array.from({ length: 16 }, () => buyer(app)));
    // Caller i has i % 4 orders, each with a code of its own.
    const owned = await Promise.all(
      callers.map(async (caller, i) => {
        const utrs: string[] = [];
        for (let n = 0; n < i % 4; n += 1) {
          const utr = (await expectJson(await caller.api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [1] }), 200)).message.utr as string;
          await deliver(utr, serviceId, [`CODE-${i}-${n}`]);
          utrs.unshift(utr);
        }
        return utrs;
      }),
    );
    let pages: Json[] = [];
    const statements = await statementsDuring(async () => (pages = await Promise.all(callers.map((caller) => page(caller.api, '/api/get-card/orders?per_page=2')))));
    pages.forEach((answer, i) => {
      expect(answer.total).toBe(i % 4);
      expect(answer.data.map((o: Json) => o.utr)).toEqual(owned[i]!.slice(0, 2));
      expect(answer.data.map((o: Json) => o.order_details[0].card_codes)).toEqual(
        owned[i]!.slice(0, 2).map((_, n) => [`CODE-${i}-${(i % 4) - 1 - n}`]),
      );
    });
    const reads = statements.filter((text) => /\bunnest\b/.test(text) && /\borders\b/.test(text));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThan(callers.length);
  });

  it('writes compact JSON that reads as the same values, whatever the names, codes and form answers hold', async () => {
    const me = await buyer(app);
    // Names that look like the codes field, quotes, backslashes, control characters and non-ASCII text.
    const name = 'Gift "card_codes":[ \\ \u0001 ünï ☃';
    const card = await createCard(app.services.db, { name, services: [{ name: '"card_codes":["x"]', price: '12.50', discount: '0.50' }] });
    const serviceId = card.services[0]!.id;
    const utr = (await expectJson(await me.api.postJson('/api/card/make-order', { service_ids: [serviceId], quantities: [2] }), 200)).message.utr as string;
    const codes = ['Q"UOTE\\-1', 'ÜNI-☃-\n-2'];
    await deliver(utr, serviceId, codes);
    await createReview(app.services.db, { accountId: me.keys.id, kind: 'card', productId: card.id, rating: 4, comment: 'a "quoted" \\ review' });
    const topUp = await createTopUp(app.services.db, { name: 'Form "answers"', orderFields });
    await expectJson(await me.api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id, User_Id: 'a"b\\c\td' }), 200);

    for (const path of ['/api/get-card/orders', `/api/order/details?utr=${utr}`, '/api/get-topup/orders']) {
      const text = await (await me.api.get(path)).text();
      // Compact, numbers as JavaScript writes them (12.50 → 12.5): serialising the parsed answer gives the same bytes.
      expect(text).toBe(JSON.stringify(JSON.parse(text)));
    }
    const [order] = (await page(me.api, '/api/get-card/orders')).data;
    expect(order.order_details).toMatchObject([{ card: name, service: '"card_codes":["x"]', base_price: 12.5, discount: 0.5, card_codes: codes }]);
    expect(order.price).toBe(24);
    expect(order.review_user_info).toEqual([{ review: { comment: 'a "quoted" \\ review', rating: 4, status: 'active' } }]);
    const [topUpOrder] = (await page(me.api, '/api/get-topup/orders')).data;
    expect(topUpOrder.informations).toEqual({ 'Player ID': 'a"b\\c\td' });
    expect(topUpOrder.order_details[0].name).toBe('Form "answers"');
  });

  it("reads only the page's lines however many the store holds: neither orders nor order_lines is scanned", async () => {
    // The page's size is a parameter of the statement, so the planner cannot see it is at most 100 orders: it took the
    // page for thousands and hashed every line of the store (43 ms a page at 60,000 lines).
    const me = await buyer(app);
    const card = await createCard(app.services.db, { name: 'Bulk', services: [{ name: 'Bulk 10', price: '10.00' }] });
    const { sql } = app.services;
    await sql`
      insert into orders (utr, account_id, kind, status, total, currency, currency_symbol, created_at)
      select 'CBULK' || lpad(i::text, 8, '0'), ${me.keys.id}, 'card', 1, 10, 'USD', '$', now() - (30000 - i) * interval '1 second'
      from generate_series(1, 30000) i`;
    await sql`
      insert into order_lines (order_id, card_service_id, card_id, quantity, base_price, discount, unit_price, line_total)
      select id, ${card.services[0]!.id}, ${card.id}, 1, 10, 0, 10, 10 from orders where account_id = ${me.keys.id}`;
    await sql`analyze orders, order_lines`;

    let first: Json = {};
    const listing = await listingDuring(async () => (first = await page(me.api, '/api/get-card/orders?per_page=100')));
    expect(first.data.map((o: Json) => o.utr)).toEqual(Array.from({ length: 100 }, (_, i) => `CBULK${String(30000 - i).padStart(8, '0')}`));
    const scannedIn = (plan: PlanNode) => {
      const scanned: string[] = [];
      walkPlan(plan, (node) => node['Node Type'] === 'Seq Scan' && scanned.push(node['Relation Name']!));
      return scanned;
    };
    const planned = scannedIn(await planOf(sql, listing.text, listing.params));
    expect(planned).not.toContain('orders');
    expect(planned).not.toContain('order_lines');
    // How large the planner guesses the page to be depends on the statistics of the whole database (every test's
    // accounts): planned with nested loops costed dear, as a page guessed at thousands of orders makes them, the lines
    // must still be read by their orders.
    expect(scannedIn(await planUnder(['enable_nestloop = off'], listing))).not.toContain('order_lines');
  });

  it("writes each line of the page once: its codes are looked up once per line, not once per line for every order of the page", async () => {
    // The page's orders may be guessed at one row (their number is a parameter), and the planner then rescanned the
    // aggregate of the page's lines for each order of the page (64 code lookups for these ten lines).
    const me = await buyer(app);
    const card = await createCard(app.services.db, { name: 'Once', services: [{ name: 'Once 5', price: '5.00' }] });
    for (let i = 0; i < 10; i++) {
      await expectJson(await me.api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    }
    let listed: Json = {};
    const listing = await listingDuring(async () => (listed = await page(me.api, '/api/get-card/orders')));
    expect(listed.data).toHaveLength(10);
    // Planned as a page guessed at one order is: nested loops, their inner side not kept (hash joins or a Materialize
    // node, which other statistics bring, build the lines once whatever the statement says).
    const plan = await planUnder(['enable_hashjoin = off', 'enable_mergejoin = off', 'enable_material = off'], listing, { analyze: true });
    expect(timesRead(plan, 'card_codes')).toBe(10);
  });

  it('answers an account without orders with an empty first page', async () => {
    const { api } = await buyer(app);
    expect(await page(api, '/api/get-card/orders')).toMatchObject({ data: [], total: 0, from: null, to: null, last_page: 1 });
    expect(await page(api, '/api/get-topup/orders?page=4')).toMatchObject({ data: [], total: 0, current_page: 4, last_page: 1 });
  });
});

describe('order list security', () => {
  it('shows only the caller\'s orders of the listed kind', async () => {
    const me = await buyer(app);
    const other = await buyer(app);
    const card = await createCard(app.services.db);
    const topUp = await createTopUp(app.services.db);
    const mine = await expectJson(await me.api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    await expectJson(await other.api.postJson('/api/card/make-order', { service_ids: [card.services[0]!.id], quantities: [1] }), 200);
    await expectJson(await other.api.postJson('/api/top-up/make-order', { topUpId: topUp.id, serviceId: topUp.services[0]!.id }), 200);
    expect((await page(me.api, '/api/get-card/orders')).data.map((o: Json) => o.utr)).toEqual([mine.message.utr]);
    expect((await page(me.api, '/api/get-topup/orders')).total).toBe(0);
  });

  it('answers 401 without a valid token on every order endpoint', async () => {
    const paths = ['/api/get-topup/orders', '/api/topUp/order', '/api/get-card/orders', '/api/card/order'];
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }] as Array<Record<string, string>>) {
      for (const path of paths) expect(await expectFailure(await app.request(path, { headers }), 401)).toBe('Unauthenticated.');
      for (const path of ['/api/top-up/make-order', '/api/card/make-order']) {
        const response = await app.request(path, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{}' });
        expect(await expectFailure(response, 401)).toBe('Unauthenticated.');
      }
    }
  });
});
