import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ProductKind } from '../../db/schema.js';
import type { AppEnv } from '../../http/context.js';
import { contractRouter, endpoint, validBody, withCatalogChecks } from '../../http/contract.js';
import { id } from '../../http/validation.js';
import { offerLane, requestTarget } from '../../http/cached-json.js';
import { pageObjectShell, pageUrlsAt, type PageUrls } from '../../http/pagination.js';
import { successBody, successText } from '../../http/json-text.js';
import { requestLogger } from '../../http/request-log.js';
import { assetBaseOf, assetBaseUnder } from '../../http/urls.js';
import { pageOffset, pageRequest } from '../../lib/paging.js';
import type { Caller } from '../../core/caller.js';
import type { Config } from '../../core/env.js';
import type { Services } from '../../runtime/services.js';
import { enqueueFulfilment } from '../../queues/index.js';
import { signedIn, signedInReading } from '../auth/middleware.js';
import { openCode } from '../inventory/codes.js';
import { findOrder, listOrders, type OrderReader } from './listing.js';
import { cardOrderProblems, placeCardOrder, placeTopUpOrder, type PlacementDeps } from './place.js';
import { topUpOrderFindings } from './service.js';
import { checkPlayer, type PlayerCheckDeps } from './player-check.js';
import { FORM_ONLY, lookUpPlayer } from '../suppliers/players.js';
import {
  AnyOrder,
  cardOrderBody,
  cardOrderLists,
  checkPlayerBody,
  PlayerCheckAnswer,
  CardOrderPage,
  idempotencyHeader,
  orderDetailsQuery,
  orderListQuery,
  PlacedCardOrder,
  topUpOrderBody,
  TopUpOrderPage,
} from './schemas.js';
import { notFound } from '../../core/errors.js';

/** Placement logs with the request's id and hands it to the order's job, so the job's lines carry it too. */
const placement = (c: Context<AppEnv>): PlacementDeps => {
  const { db, metrics, queues, orderPages } = c.get('services');
  const enqueue = enqueueFulfilment(queues);
  return {
    db,
    logger: requestLogger(c),
    metrics,
    orderPages,
    enqueue: (order) => enqueue({ ...order, requestId: c.get('requestId') }),
    // C25: a test order's check never reaches a supplier.
    lookUpPlayer: async (serviceId, fields) => (c.get('account').livemode ? lookUpPlayer(playerLookup(c), serviceId, fields) : FORM_ONLY),
  };
};

/** A6 and the player check (C27), for withCatalogChecks: a topUpId the schema accepts has its order form judged, whatever else it refused. */
const topUpFieldChecks = async (body: Record<string, unknown>, refused: ReadonlySet<string>, c: Context<AppEnv>) => {
  const topUpId = id().safeParse(body.topUpId);
  if (refused.has('topUpId') || !topUpId.success) return [];
  const serviceId = refused.has('serviceId') ? null : (id().safeParse(body.serviceId).data ?? null);
  const input = { topUpId: topUpId.data, serviceId, fields: body };
  return (await topUpOrderFindings(c.get('services').db, input)).messages;
};

/** A12, for withCatalogChecks: the lists the schema accepts are judged against the catalog and the quantity limit, whatever else it refused. */
const cardOrderChecks = async (body: Record<string, unknown>, refused: ReadonlySet<string>, c: Context<AppEnv>) => {
  const { db, config } = c.get('services');
  const accepted = <T>(field: 'service_ids' | 'quantities', list: { data?: T }) => (refused.has(field) ? null : (list.data ?? null));
  const serviceIds = accepted('service_ids', cardOrderLists.service_ids.safeParse(body.service_ids));
  const quantities = accepted('quantities', cardOrderLists.quantities.safeParse(body.quantities));
  return cardOrderProblems(db, { serviceIds, quantities }, config.MAX_QUANTITY_PER_LINE);
};

/** The player check's reads (C27): the catalog, the providers' credentials, their answers kept in Redis. */
const playerLookup = (c: Context<AppEnv>): PlayerCheckDeps => {
  const { db, redis, config } = c.get('services');
  return { db, redis, codeKey: config.codeEncryptionKey, cachePrefix: config.BULLMQ_PREFIX };
};

const ORDER_LISTS = {
  top_up: { paths: ['/get-topup/orders', '/topUp/order'], summary: 'Your top-up orders, newest first', page: TopUpOrderPage },
  card: { paths: ['/get-card/orders', '/card/order'], summary: 'Your card orders, newest first, with their codes', page: CardOrderPage },
} as const;

/** How `caller` reads its orders: the asset URLs under `assetBase`, and the codes opened with the store's key. */
const readerFor = (config: Config, caller: Caller, assetBase: string): OrderReader => ({
  caller,
  assetBase,
  openCode: (sealed) => openCode(config.codeEncryptionKey, sealed),
});

/** This request's reader: the caller's orders, with this request's asset URLs. */
const orderReader = (c: Context<AppEnv>) => readerFor(c.get('services').config, c.get('account'), assetBaseOf(c));

type OrderListQuery = z.infer<typeof orderListQuery>;

/**
 * The `message` of an order list's answer for a caller: a page of its orders of `kind`, as `query` asks, its links
 * under `urls`, its asset URLs under `assetBase`.
 */
function orderPages(services: Services, urls: PageUrls, assetBase: string, kind: ProductKind, query: OrderListQuery) {
  const page = pageRequest(query, 10);
  // The page object around the entries, by the page's total and last entry: the same for every read of an account's
  // page while nothing on it changes (the lane answers this path and query again and again, for every account).
  const shells = new Map<string, (entries: string) => string>();
  return async (caller: Caller): Promise<string> => {
    const { total, entries, last } = await listOrders(services, readerFor(services.config, caller, assetBase), kind, { ...page, after: query.after });
    const shellKey = `${total} ${last ?? ''}`;
    let shell = shells.get(shellKey);
    if (!shell) {
      if (shells.size >= MAX_SHELLS) shells.clear();
      // The entries come as the database wrote their JSON (listing.ts): as many as the total leaves for this page.
      const count = Math.max(0, Math.min(page.perPage, total - pageOffset(page)));
      // next_page_url reads on from this page's last order (keyset), so deep pages cost what the first ones do.
      shell = pageObjectShell(urls, 'data', count, total, page, last);
      shells.set(shellKey, shell);
    }
    return shell(entries);
  };
}

/** The page objects kept for one path and query (one per account that reads it, about 2 KB each). */
const MAX_SHELLS = 1000;

/** A6, A12, A15, A16 (+ C1 aliases). */
export function orderRoutes() {
  const router = contractRouter();
  const tag = 'Orders';

  router.openapi(
    endpoint({
      method: 'post',
      path: '/top-up/make-order',
      summary: 'Place a top-up order',
      tag,
      guard: signedIn,
      headers: idempotencyHeader,
      body: topUpOrderBody,
      ok: z.string().openapi({ example: 'Order placed successfully. Your order number is T0MWT6AW6V90F0B0E11FEC9DCD.' }),
      errors: [409],
    }),
    async (c) => {
      const body = validBody(c, (target) => c.req.valid(target));
      const { utr } = await placeTopUpOrder(placement(c), {
        accountId: c.get('account').id,
        livemode: c.get('account').livemode,
        topUpId: body.topUpId,
        serviceId: body.serviceId,
        fields: body,
        idempotencyKey: c.req.valid('header')['Idempotency-Key'] ?? null,
        maxPrice: body.max_price ?? null,
        checkPlayer: body.check_player ?? false,
      });
      return c.json({ status: 'success' as const, message: `Order placed successfully. Your order number is ${utr}.` }, 200);
    },
    withCatalogChecks(topUpFieldChecks),
  );

  router.openapi(
    endpoint({
      method: 'post',
      path: '/top-up/check-player',
      summary: "Check a top-up's order fields, and the player with the service's provider, before ordering",
      tag,
      // It places nothing: a read-scope key may check players (C26).
      guard: signedInReading,
      body: checkPlayerBody,
      ok: PlayerCheckAnswer,
    }),
    async (c) => {
      const body = validBody(c, (target) => c.req.valid(target));
      const answer = await checkPlayer(playerLookup(c), { topUpId: body.topUpId, serviceId: body.serviceId, fields: body }, c.get('account').livemode);
      return c.json({ status: 'success' as const, message: answer }, 200);
    },
    withCatalogChecks(topUpFieldChecks),
  );

  router.openapi(
    endpoint({
      method: 'post',
      path: '/card/make-order',
      summary: 'Place a card order',
      tag,
      guard: signedIn,
      headers: idempotencyHeader,
      body: cardOrderBody,
      ok: PlacedCardOrder,
      errors: [409],
    }),
    async (c) => {
      const { service_ids: serviceIds, quantities, max_price: maxPrice } = validBody(c, (target) => c.req.valid(target));
      const { utr } = await placeCardOrder(placement(c), {
        accountId: c.get('account').id,
        livemode: c.get('account').livemode,
        lines: serviceIds.map((serviceId, i) => ({ serviceId, quantity: quantities[i]! })),
        idempotencyKey: c.req.valid('header')['Idempotency-Key'] ?? null,
        maxQuantityPerLine: c.get('services').config.MAX_QUANTITY_PER_LINE,
        maxPrice: maxPrice ?? null,
      });
      return c.json({ status: 'success' as const, message: { utr } }, 200);
    },
    withCatalogChecks(cardOrderChecks),
  );

  // C1: the sample paths topUp/order and card/order serve the same lists.
  for (const kind of ['top_up', 'card'] as const satisfies ProductKind[]) {
    const list = ORDER_LISTS[kind];
    for (const path of list.paths) {
      router.openapi(
        endpoint({ method: 'get', path, summary: list.summary, tag, guard: signedIn, query: orderListQuery, ok: list.page, errors: [422] }),
        async (c) => {
          const query = c.req.valid('query');
          const services = c.get('services');
          const target = requestTarget(c);
          const assetBase = assetBaseUnder(services.config.ASSET_BASE_URL, target.base);
          const pageFor = orderPages(services, pageUrlsAt(target.base, target.url), assetBase, kind, query);
          // The same path and query asked again, by any caller, is answered by the cached-read lane with the caller's own
          // page; a keyset page (after=) too, whose cursor finds nothing in another account's list (listing.ts).
          offerLane(c, async (caller) => ({ body: successBody(await pageFor(caller)) }), target);
          return successText<z.infer<typeof list.page>>(c, await pageFor(c.get('account')));
        },
      );
    }
  }

  router.openapi(
    endpoint({
      method: 'get',
      path: '/order/details',
      summary: 'One of your orders by its utr, as the order lists show it (card codes included)',
      tag,
      guard: signedIn,
      query: orderDetailsQuery,
      ok: AnyOrder,
      errors: [404, 422],
    }),
    async (c) => {
      const { utr } = c.req.valid('query');
      const found = await findOrder(c.get('services').db, orderReader(c), utr);
      // Someone else's order answers as an unknown one: a utr reveals nothing about other accounts.
      if (!found) throw notFound('order', 'utr', utr);
      return successText<z.infer<typeof AnyOrder>>(c, found.entry);
    },
  );

  return router;
}
