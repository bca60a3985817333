import type { AssetUrl } from '../../http/urls.js';
import { isoMicros } from '../../lib/time.js';
import type { ReviewWithAuthor } from './service.js';


/** The picture of a reviewer who has none of their own. */
export const DEFAULT_AVATAR = 'avatars/default.webp';

/** Which optional parts a review list shows (spec §2 Review). */
export type ReviewShape = {
  /** `user_id`: card reviews and the top-up details list. */
  userId?: boolean;
  /** `reviewable_type` / `reviewable_id`: the top-up details list. */
  target?: boolean;
  /** `user.email` (masked): the top-up details list. */
  email?: boolean;
};

/** Reviewers are other accounts (invariant 5): only a hint of their address is shown, e.g. `j***@example.com`. */
export function maskEmail(email: string | null): string | null {
  if (!email) return null;
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

export function presentReview(review: ReviewWithAuthor, asset: AssetUrl, shape: ReviewShape = {}) {
  const { author } = review;
  return {
    id: review.id,
    ...(shape.userId ? { user_id: review.accountId } : {}),
    ...(shape.target ? { reviewable_type: review.reviewableType, reviewable_id: review.reviewableId } : {}),
    rating: Number(review.rating),
    comment: review.comment,
    status: review.status,
    created_at: isoMicros(review.createdAt),
    updated_at: isoMicros(review.updatedAt),
    user: {
      id: author.id,
      firstname: author.firstname,
      lastname: author.lastname,
      image: author.image,
      image_driver: author.imageDriver,
      imgPath: asset(author.image ?? DEFAULT_AVATAR),
      LastSeenActivity: author.recentlySeen,
      fullname: `${author.firstname} ${author.lastname}`.trim(),
      ...(shape.email ? { email: maskEmail(author.email) } : {}),
    },
  };
}
