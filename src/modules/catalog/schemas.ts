import { z } from '@hono/zod-openapi';
import { id, pageQuery, requiredText } from '../../http/validation.js';

/** A3 GET top-up/list */
export const topUpListQuery = z.object({
  category_id: id().optional(),
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
});

/** A4 GET top-up/details */
export const topUpDetailsQuery = z.object({ slug: requiredText(160) });

/** A5 GET topup/services */
export const topUpServicesQuery = z.object({ top_up_id: id().optional() });

/** A9 GET get-card */
export const cardListQuery = z.object({ category_id: id().optional() });

/** A10 GET card/details */
export const cardDetailsQuery = z.object({ card_id: id() });

/** A11 GET card/services */
export const cardServicesQuery = z.object({ card_id: id().optional() });
