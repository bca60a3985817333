import { z } from '@hono/zod-openapi';
import { id, numberBetween, pageQuery, requiredText } from '../../http/validation.js';

/** A7 GET topup/review */
export const topUpReviewListQuery = z.object({ top_up_id: id(), page: pageQuery().optional() });

/** A13 GET card/review */
export const cardReviewListQuery = z.object({ card_id: id(), page: pageQuery().optional() });

const reviewFields = { rating: numberBetween(1, 5), comment: requiredText(2000) };

/** A8 POST topup/review */
export const topUpReviewBody = z.object({ topUpId: id(), ...reviewFields });

/** A14 POST card/review */
export const cardReviewBody = z.object({ card_id: id(), ...reviewFields });
