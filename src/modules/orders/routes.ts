import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ProductKind } from '../../db/schema.js';
import type { AppEnv } from '../../http/context.js';
import { contractRouter, endpoint, validBody } from '../../http/contract.js';
import { pageObject, pageSchema } from '../../http/pagination.js';
import { assetUrls } from '../../http/urls.js';
import { pageRequest } from '../../lib/paging.js';
import { enqueueFulfilment } from '../../queues/index.js';
import { signedIn } from '../auth/middleware.js';
import { openCode } from '../inventory/codes.js';
import { listOrders } from './listing.js';
import { placeCardOrder, placeTopUpOrder, type PlacementDeps } from './place.js';
import { presentCardOrder, presentTopUpOrder } from './presenters.js';
import { CardOrder, cardOrderBody, idempotencyHeader, orderListQuery, TopUpOrder, topUpOrderBody } from './schemas.js';

const placement = (c: Context<AppEnv>): PlacementDeps => {
  const { db, logger, queues } = c.var.services;
  return { db, logger, enqueue: enqueueFulfilment(queues) };
};

const ORDER_LISTS = {
  top_up: { paths: ['/get-topup/orders', '/topUp/order'], summary: 'Your top-up orders, newest first', entry: TopUpOrder, present: presentTopUpOrder },
  card: { paths: ['/get-card/orders', '/card/order'], summary: 'Your card orders, newest first, with their codes', entry: CardOrder, present: presentCardOrder },
} as const;

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
        accountId: c.var.account.id,
        topUpId: body.topUpId,
        serviceId: body.serviceId,
        fields: body,
        idempotencyKey: c.req.valid('header')['Idempotency-Key'] ?? null,
      });
      return c.json({ status: 'success' as const, message: `Order placed successfully. Your order number is ${utr}.` }, 200);
    },
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
      ok: z.object({ utr: z.string() }),
      errors: [409],
    }),
    async (c) => {
      const { service_ids: serviceIds, quantities } = validBody(c, (target) => c.req.valid(target));
      const { utr } = await placeCardOrder(placement(c), {
        accountId: c.var.account.id,
        lines: serviceIds.map((serviceId, i) => ({ serviceId, quantity: quantities[i]! })),
        idempotencyKey: c.req.valid('header')['Idempotency-Key'] ?? null,
        maxQuantityPerLine: c.var.services.config.MAX_QUANTITY_PER_LINE,
      });
      return c.json({ status: 'success' as const, message: { utr } }, 200);
    },
  );

  // C1: the sample paths topUp/order and card/order serve the same lists.
  for (const kind of ['top_up', 'card'] as const satisfies ProductKind[]) {
    const list = ORDER_LISTS[kind];
    for (const path of list.paths) {
      router.openapi(
        endpoint({ method: 'get', path, summary: list.summary, tag, guard: signedIn, query: orderListQuery, ok: pageSchema('data', list.entry), errors: [422] }),
        async (c) => {
          const page = pageRequest(c.req.valid('query'), 10);
          const { db, config } = c.var.services;
          const { total, entries } = await listOrders(db, c.var.account.id, kind, page, (sealed) => openCode(config.codeEncryptionKey, sealed));
          const asset = assetUrls(c);
          return c.json({ status: 'success' as const, message: pageObject(c, 'data', entries.map((e) => list.present(asset, e)), total, page) }, 200);
        },
      );
    }
  }

  return router;
}
