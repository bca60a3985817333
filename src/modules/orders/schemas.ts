import { z } from '@hono/zod-openapi';
import { id, pageQuery, positiveInt } from '../../http/validation.js';

/** A6 body: the ids, plus one field per `order_information` entry of the top-up (checked against the catalog). */
export const topUpOrderBody = z.looseObject({ topUpId: id(), serviceId: id() });

const MAX_LINES = 100;
const lineList = <T extends z.ZodType>(item: T) =>
  z.array(item, { error: 'must be an array.' }).max(MAX_LINES, { error: `must not have more than ${MAX_LINES} items.` });

/**
 * A12 body, after `serviceIds`/`quantity` are read as `service_ids`/`quantities` (C5). Quantities are
 * bounded per line by MAX_QUANTITY_PER_LINE after equal services are merged.
 */
export const cardOrderBody = z.object({ service_ids: lineList(id()), quantities: lineList(positiveInt()) });

/** A15/A16 query (C11). */
export const orderListQuery = z.object({ page: pageQuery().optional(), per_page: pageQuery().optional() });
