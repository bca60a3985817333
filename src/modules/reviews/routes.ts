import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import { route } from '../../http/route.js';
import { getCardReviews, getTopUpReviews, postCardReview, postTopUpReview } from './handlers.js';
import { cardReviewBody, cardReviewListQuery, topUpReviewBody, topUpReviewListQuery } from './schemas.js';

export function reviewRoutes() {
  const router = new OpenAPIHono<AppEnv>();
  const tags = ['Reviews'];
  route(
    router,
    { method: 'get', path: '/topup/review', summary: 'Published reviews of a top-up, 15 per page', tags, security: 'token', query: topUpReviewListQuery },
    getTopUpReviews,
  );
  route(
    router,
    { method: 'post', path: '/topup/review', summary: 'Review a top-up you ordered', tags, security: 'token', body: topUpReviewBody },
    postTopUpReview,
  );
  route(
    router,
    { method: 'get', path: '/card/review', summary: 'Published reviews of a card, 15 per page', tags, security: 'token', query: cardReviewListQuery },
    getCardReviews,
  );
  route(
    router,
    { method: 'post', path: '/card/review', summary: 'Review a card you ordered', tags, security: 'token', body: cardReviewBody },
    postCardReview,
  );
  return router;
}
