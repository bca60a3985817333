import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import type { DeliveryStatus, WebhookEventType } from '../../db/schema.js';
import { AppError, notFound } from '../../core/errors.js';
import { pageOffset, type PageRequest } from '../../lib/paging.js';
import { isoMicros } from '../../lib/time.js';

/** A delivery as operators see it (C17): its event, where it goes, how its attempts went. Never a secret. */
export type DeliveryView = {
  id: number;
  event_id: number;
  type: WebhookEventType;
  account_id: number | null;
  endpoint_id: number | null;
  url: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
};

const view = sql`
  select d.id::float8 as id, d.event_id::float8 as event_id, e.type, e.account_id, d.endpoint_id,
    p.url, d.status, d.attempts,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at,
    d.last_status_code, d.last_error, d.delivered_at, d.created_at
  from webhook_deliveries d
  join webhook_events e on e.id = d.event_id
  left join webhook_endpoints p on p.id = d.endpoint_id`;

const dated = (row: DeliveryView): DeliveryView => ({
  ...row,
  next_attempt_at: isoMicros(row.next_attempt_at),
  delivered_at: isoMicros(row.delivered_at),
  created_at: isoMicros(row.created_at),
});

/** Deliveries of every account, newest first, optionally of one status (`failed`: the ones that gave up). */
export async function listDeliveries(
  db: DbOrTx,
  filter: { status?: DeliveryStatus | undefined } & PageRequest,
): Promise<{ data: DeliveryView[]; total: number }> {
  const where = filter.status ? sql`where d.status = ${filter.status}` : sql``;
  const [{ total } = { total: 0 }] = await db.execute<{ total: number }>(
    sql`select count(*)::int as total from webhook_deliveries d ${where}`,
  );
  const rows = await db.execute<DeliveryView>(sql`${view} ${where} order by d.id desc limit ${filter.perPage} offset ${pageOffset(filter)}`);
  return { data: rows.map(dated), total };
}

/** Sends a delivery once more, now: a failed or skipped one goes back to pending for one attempt. */
export async function retryDelivery(db: DbOrTx, deliveryId: number): Promise<DeliveryView> {
  const moved = await db.execute(sql`
    update webhook_deliveries set status = 'pending', next_attempt_at = now(), enqueued_at = null, finished_at = null
    where id = ${deliveryId} and status <> 'delivered'
    returning id`);
  if (moved.length === 0) {
    const exists = await db.execute(sql`select 1 from webhook_deliveries where id = ${deliveryId}`);
    throw exists.length === 0 ? notFound('webhook delivery', 'id', deliveryId) : new AppError('already_delivered');
  }
  const [row] = await db.execute<DeliveryView>(sql`${view} where d.id = ${deliveryId}`);
  return dated(row!);
}
