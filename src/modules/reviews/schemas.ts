import { z } from '@hono/zod-openapi';
import { EXAMPLE_TIMESTAMP, exampleAsset } from '../../http/examples.js';
import { id, keyOf, numberBetween, pageQuery, requiredText } from '../../http/validation.js';
import { DEMO_REVIEWERS, DEMO_REVIEWS } from '../../demo/catalog.js';
import { DEFAULT_AVATAR, maskEmail } from './presenters.js';

/** A7 GET topup/review */
export const topUpReviewListQuery = z.object({ top_up_id: keyOf('top-up', id()), page: pageQuery().optional() });

/** A13 GET card/review */
export const cardReviewListQuery = z.object({ card_id: keyOf('card', id()), page: pageQuery().optional() });

const reviewFields = { rating: numberBetween(1, 5), comment: requiredText(2000) };

/** A8 POST topup/review */
export const topUpReviewBody = z.object({ topUpId: id(), ...reviewFields });

/** A14 POST card/review */
export const cardReviewBody = z.object({ card_id: id(), ...reviewFields });

// ───────────────────────────── responses (spec §2 Review) ─────────────────────────────

/** Example: the first demo review, as the top-up details list it (reviewers' accounts follow the demo account, id 1). */
const [reviewer, , rating, comment] = DEMO_REVIEWS[0]!;
const author = DEMO_REVIEWERS[reviewer]!;
const reviewExample = {
  id: 1,
  user_id: reviewer + 2,
  reviewable_type: 'top_up' as const,
  reviewable_id: 1,
  rating,
  comment,
  status: 1,
  created_at: EXAMPLE_TIMESTAMP,
  updated_at: EXAMPLE_TIMESTAMP,
  user: {
    id: reviewer + 2,
    firstname: author.firstname,
    lastname: author.lastname,
    image: null,
    image_driver: 'local',
    imgPath: exampleAsset(DEFAULT_AVATAR),
    LastSeenActivity: false,
    fullname: `${author.firstname} ${author.lastname}`,
    email: maskEmail(author.email),
  },
};

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
  .openapi('Review', { example: reviewExample });
