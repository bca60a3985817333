import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from './client.js';
import type { WebhookEventType } from './schema.js';

/**
 * The outbox (C17): events are rows written by the transaction that causes them, with one delivery row
 * per endpoint that wants them; the relay in the worker processes hands due deliveries to the queue.
 */

/**
 * The enabled endpoints of `accountId` that want events of `type`, of the mode of the order (`livemode`, C25: a test
 * order's events go only to endpoints registered with a test token, a live order's never to those). SQL expressions.
 */
export const wantingEndpoints = (accountId: SQL, type: SQL, livemode: SQL) => sql`
  select id from webhook_endpoints
  where account_id = ${accountId} and livemode = ${livemode} and enabled and deleted_at is null and (events is null or ${type} = any(events))`;

/** An operator event (stock.low): delivered to ADMIN_WEBHOOK_URL. */
export async function recordOperatorEvent(db: DbOrTx, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
  await db.execute(sql`
    with event as (
      insert into webhook_events (type, account_id, data) values (${type}, null, ${JSON.stringify(data)}::jsonb) returning id
    )
    insert into webhook_deliveries (event_id, endpoint_id) select id, null from event`);
}

/** An event for one endpoint of an account (webhook.test), whatever its event filter says. */
export async function recordEndpointEvent(
  db: DbOrTx,
  endpoint: { id: number; accountId: number },
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<number> {
  const [row] = await db.execute<{ id: number }>(sql`
    with event as (
      insert into webhook_events (type, account_id, data) values (${type}, ${endpoint.accountId}, ${JSON.stringify(data)}::jsonb) returning id
    )
    insert into webhook_deliveries (event_id, endpoint_id) select id, ${endpoint.id} from event returning id::float8 as id`);
  return row!.id;
}
