import { sql, type SQL } from 'drizzle-orm';

/**
 * Whether the top-up order in the row `order` (an alias of `orders`) goes through provider routes (C22): the routing
 * came back to it, it was sent to a provider already, or its service has routes.
 */
export const routedOrder = (order: SQL) => sql`(${order}.routing_step > 0
  or exists (select 1 from provider_attempts a where a.order_id = ${order}.id)
  or exists (select 1 from order_lines l join top_up_routes r on r.top_up_service_id = l.top_up_service_id where l.order_id = ${order}.id))`;
