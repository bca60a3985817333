import type { Context } from 'hono';
import type { ProductKind } from '../../db/schema.js';
import { readBody } from '../../http/body.js';
import type { AppEnv } from '../../http/context.js';
import { AppError, validationError } from '../../errors.js';
import { reviewPagination } from '../../http/pagination.js';
import { pageOffset, pageRequest } from '../../lib/paging.js';
import { success } from '../../http/respond.js';
import { assetUrl } from '../../http/urls.js';
import { fieldLabel, validate } from '../../http/validation.js';
import { findCard, findTopUp } from '../catalog/service.js';
import { cardReviewBody, cardReviewListQuery, topUpReviewBody, topUpReviewListQuery } from './schemas.js';
import { reviewJson, type ReviewShape } from './serializers.js';
import { publishedReviews, submitReview } from './service.js';

type Ctx = Context<AppEnv>;

const REVIEWS_PER_PAGE = 15;

async function listFor(c: Ctx, kind: ProductKind, productId: number, page: number | undefined, shape: ReviewShape) {
  const { db } = c.var.services;
  const product = kind === 'top_up' ? await findTopUp(db, productId) : await findCard(db, productId);
  if (!product) throw new AppError('not_found');
  const request = pageRequest({ page }, REVIEWS_PER_PAGE);
  const { rows, total } = await publishedReviews(db, kind, productId, {
    limit: request.perPage,
    offset: pageOffset(request),
  });
  return success(c, {
    reviews: rows.map((r) => reviewJson(r, (path) => assetUrl(c, path), shape)),
    pagination: reviewPagination(c, total, request),
  });
}

/** A7 GET topup/review */
export async function getTopUpReviews(c: Ctx) {
  const query = validate(topUpReviewListQuery, c.req.query(), 'query');
  return listFor(c, 'top_up', query.top_up_id, query.page, {});
}

/** A13 GET card/review: card reviews name their reviewer's id. */
export async function getCardReviews(c: Ctx) {
  const query = validate(cardReviewListQuery, c.req.query(), 'query');
  return listFor(c, 'card', query.card_id, query.page, { userId: true });
}

/**
 * Always the caller's own review (invariant 5). Validation first (an unknown product is a 422 on its
 * body field), then the business rules of C10 (409).
 */
async function submit(c: Ctx, kind: ProductKind, idField: string, productId: number, rating: number, comment: string) {
  const { db, config } = c.var.services;
  const outcome = await submitReview(db, {
    accountId: c.var.account.id,
    kind,
    productId,
    rating,
    comment,
    published: !config.REVIEWS_REQUIRE_APPROVAL,
  });
  if (outcome === 'unknown_product') throw validationError([`The selected ${fieldLabel(idField)} is invalid.`]);
  if (outcome !== 'submitted') throw new AppError(outcome);
  // total_review / avg_rating are part of the cached catalog rows.
  await c.var.services.catalogCache.invalidate();
  return success(c, 'Review submitted successfully.');
}

/** A8 POST topup/review */
export async function postTopUpReview(c: Ctx) {
  const body = validate(topUpReviewBody, await readBody(c));
  return submit(c, 'top_up', 'topUpId', body.topUpId, body.rating, body.comment);
}

/** A14 POST card/review */
export async function postCardReview(c: Ctx) {
  const body = validate(cardReviewBody, await readBody(c));
  return submit(c, 'card', 'card_id', body.card_id, body.rating, body.comment);
}
