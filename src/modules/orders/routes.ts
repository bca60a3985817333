import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { route } from '../../http/route.js';
import { listOrdersHandler, makeCardOrder, makeTopUpOrder } from './handlers.js';
import { cardOrderBody, orderListQuery, topUpOrderBody } from './schemas.js';

/** A6, A12, A15, A16 (+ C1 aliases). */
export function orderRoutes() {
  const router = new OpenAPIHono<AppEnv>();
  route(
    router,
    {
      method: 'post',
      path: '/top-up/make-order',
      summary: 'Place a top-up order (optional Idempotency-Key header)',
      tags: ['Orders'],
      body: topUpOrderBody,
      security: 'token',
    },
    makeTopUpOrder,
  );
  route(
    router,
    {
      method: 'post',
      path: '/card/make-order',
      summary: 'Place a card order (optional Idempotency-Key header)',
      tags: ['Orders'],
      body: cardOrderBody,
      security: 'token',
    },
    makeCardOrder,
  );
  // C1: the sample paths topUp/order and card/order serve the same lists.
  const lists = [
    { paths: ['/get-topup/orders', '/topUp/order'], kind: 'top_up', summary: 'List my top-up orders' },
    { paths: ['/get-card/orders', '/card/order'], kind: 'card', summary: 'List my card orders' },
  ] as const;
  for (const { paths, kind, summary } of lists) {
    for (const path of paths) {
      route(router, { method: 'get', path, summary, tags: ['Orders'], query: orderListQuery, security: 'token' }, listOrdersHandler(kind));
    }
  }
  return router;
}
