import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { PRODUCT_KINDS } from '../../db/kinds.js';
import type { ProductKind } from '../../db/schema.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import type { AppEnv } from '../../http/context.js';
import { contractRouter, endpoint, validBody, withCatalogChecks } from '../../http/contract.js';
import { reviewPagination, ReviewPagination } from '../../http/pagination.js';
import { assetUrls } from '../../http/urls.js';
import { fieldLabel, id } from '../../http/validation.js';
import { pageOffset, pageRequest } from '../../lib/paging.js';
import { signedIn } from '../auth/middleware.js';
import { presentReview, type ReviewShape } from './presenters.js';
import { cardReviewBody, cardReviewListQuery, Review, topUpReviewBody, topUpReviewListQuery } from './schemas.js';
import { isLiveProduct, publishedReviews, submitReview } from './service.js';

type Ctx = Context<AppEnv>;

const REVIEWS_PER_PAGE = 15;
const ReviewList = z.object({ reviews: z.array(Review), pagination: ReviewPagination });

/** A product's published reviews, newest first, 15 per page (C10). */
async function listFor(c: Ctx, kind: ProductKind, productId: number, page: number | undefined, shape: ReviewShape) {
  const { db } = c.get('services');
  if (!(await isLiveProduct(db, kind, productId))) throw notFound(PRODUCT_KINDS[kind].words, 'id', productId);
  const request = pageRequest({ page }, REVIEWS_PER_PAGE);
  const { rows, total } = await publishedReviews(db, kind, productId, { limit: request.perPage, offset: pageOffset(request) });
  return {
    reviews: rows.map((r) => presentReview(r, assetUrls(c), shape)),
    pagination: reviewPagination(c, total, request),
  };
}

/**
 * Always the caller's own review (invariant 5). Validation first (an unknown product is a 422 on its
 * body field), then the business rules of C10 (409).
 */
async function submit(c: Ctx, kind: ProductKind, idField: string, productId: number, rating: number, comment: string) {
  const { db, config, catalogCache, orderPages } = c.get('services');
  const outcome = await submitReview(db, {
    accountId: c.get('account').id,
    kind,
    productId,
    rating,
    comment,
    published: !config.REVIEWS_REQUIRE_APPROVAL,
  });
  if (outcome === 'unknown_product') throw validationError([unknownProduct(idField)]);
  if (outcome !== 'submitted') throw new AppError(outcome);
  // total_review / avg_rating are part of the cached catalog rows, and of every order list entry of the product (the
  // caller's review too).
  await Promise.all([catalogCache.invalidate(), orderPages.allChanged()]);
}

const SUBMITTED = 'Review submitted successfully.';

/** For withCatalogChecks: a review's product whose id the schema accepts is judged, whatever else it refused. */
const productCheck = (kind: ProductKind, idField: string) => async (body: Record<string, unknown>, refused: ReadonlySet<string>, c: Ctx) => {
  const productId = id().safeParse(body[idField]);
  const unknown = !refused.has(idField) && productId.success && !(await isLiveProduct(c.get('services').db, kind, productId.data));
  return unknown ? [unknownProduct(idField)] : [];
};

const unknownProduct = (idField: string) => `The selected ${fieldLabel(idField)} is invalid.`;

/** A7, A8, A13, A14 (C10). */
export function reviewRoutes() {
  const router = contractRouter();
  const tag = 'Reviews';

  router.openapi(
    endpoint({ method: 'get', path: '/topup/review', summary: 'Published reviews of a top-up, 15 per page', tag, guard: signedIn, query: topUpReviewListQuery, ok: ReviewList, errors: [404, 422] }),
    async (c) => {
      const query = c.req.valid('query');
      return c.json({ status: 'success' as const, message: await listFor(c, 'top_up', query.top_up_id, query.page, {}) }, 200);
    },
  );

  router.openapi(
    endpoint({ method: 'post', path: '/topup/review', summary: 'Review a top-up you ordered', tag, guard: signedIn, body: topUpReviewBody, ok: z.string(), errors: [409] }),
    async (c) => {
      const body = validBody(c, (target) => c.req.valid(target));
      await submit(c, 'top_up', 'topUpId', body.topUpId, body.rating, body.comment);
      return c.json({ status: 'success' as const, message: SUBMITTED }, 200);
    },
    withCatalogChecks(productCheck('top_up', 'topUpId')),
  );

  router.openapi(
    endpoint({ method: 'get', path: '/card/review', summary: 'Published reviews of a card, 15 per page', tag, guard: signedIn, query: cardReviewListQuery, ok: ReviewList, errors: [404, 422] }),
    async (c) => {
      const query = c.req.valid('query');
      // Card reviews name their reviewer's id.
      return c.json({ status: 'success' as const, message: await listFor(c, 'card', query.card_id, query.page, { userId: true }) }, 200);
    },
  );

  router.openapi(
    endpoint({ method: 'post', path: '/card/review', summary: 'Review a card you ordered', tag, guard: signedIn, body: cardReviewBody, ok: z.string(), errors: [409] }),
    async (c) => {
      const body = validBody(c, (target) => c.req.valid(target));
      await submit(c, 'card', 'card_id', body.card_id, body.rating, body.comment);
      return c.json({ status: 'success' as const, message: SUBMITTED }, 200);
    },
    withCatalogChecks(productCheck('card', 'card_id')),
  );

  return router;
}
