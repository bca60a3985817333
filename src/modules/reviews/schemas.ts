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

// ───────────────────────────── responses (spec §2 Review) ─────────────────────────────

export const Review = z
  .object({
    id: z.number().int(),
    user_id: z.number().int().optional().openapi({ description: 'Card reviews and the top-up details list' }),
    reviewable_type: z.enum(['top_up', 'card']).optional().openapi({ description: 'The top-up details list' }),
    reviewable_id: z.number().int().optional().openapi({ description: 'The top-up details list' }),
    rating: z.number(),
    comment: z.string(),
    status: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    user: z.object({
      id: z.number().int(),
      firstname: z.string(),
      lastname: z.string(),
      image: z.string().nullable(),
      image_driver: z.string(),
      imgPath: z.string(),
      LastSeenActivity: z.boolean(),
      fullname: z.string(),
      email: z.string().nullable().optional().openapi({ description: 'Masked; the top-up details list' }),
    }),
  })
  .openapi('Review');
