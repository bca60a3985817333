import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.js';
import { accounts, webhookEndpoints, type WebhookEventType } from '../../db/schema.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { encrypt } from '../../lib/crypto.js';
import { newWebhookSecret } from '../../lib/webhook-signature.js';
import { endpointUrlProblem } from './destinations.js';
import { recordEndpointEvent } from '../../db/outbox.js';

/** The events an account may subscribe to (C17). */
export const CLIENT_EVENTS = ['order.completed', 'order.stock_short', 'order.refunded'] as const satisfies WebhookEventType[];
export type ClientEvent = (typeof CLIENT_EVENTS)[number];

export const MAX_ENDPOINTS_PER_ACCOUNT = 10;

export type EndpointDeps = { db: Db; codeKey: Buffer; allowPrivate: boolean };

export type Endpoint = {
  id: number;
  url: string;
  events: ClientEvent[];
  enabled: boolean;
  failingSince: string | null;
  disabledAt: string | null;
  createdAt: string;
};

const columns = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  events: webhookEndpoints.events,
  enabled: webhookEndpoints.enabled,
  failingSince: webhookEndpoints.failingSince,
  disabledAt: webhookEndpoints.disabledAt,
  createdAt: webhookEndpoints.createdAt,
};

/** No filter stored means every client event. */
const shown = (row: Omit<Endpoint, 'events'> & { events: WebhookEventType[] | null }): Endpoint => ({
  ...row,
  events: (row.events ?? [...CLIENT_EVENTS]) as ClientEvent[],
});

/**
 * Whose endpoints: an account's live ones, or (C25) those registered with one of its test tokens, which get the events
 * of its test orders only. Each mode sees and manages only its own.
 */
export type EndpointOwner = { id: number; livemode: boolean };

/** An account's live endpoints, as operators manage them. */
export const liveEndpointsOf = (accountId: number): EndpointOwner => ({ id: accountId, livemode: true });

const ownedBy = (owner: EndpointOwner) =>
  and(eq(webhookEndpoints.accountId, owner.id), eq(webhookEndpoints.livemode, owner.livemode), isNull(webhookEndpoints.deletedAt));

const own = (owner: EndpointOwner, endpointId: number) => and(eq(webhookEndpoints.id, endpointId), ownedBy(owner));

/** Registers an endpoint; the secret is returned this once (C17). At most 10 endpoints per account and mode. */
export async function registerEndpoint(
  { db, codeKey, allowPrivate }: EndpointDeps,
  owner: EndpointOwner,
  input: { url: string; events?: ClientEvent[] | undefined },
): Promise<Endpoint & { secret: string }> {
  const problem = endpointUrlProblem(input.url, allowPrivate);
  if (problem) throw validationError([problem]);
  const secret = newWebhookSecret();
  const events = input.events ? [...new Set(input.events)] : null;
  return db.transaction(async (tx) => {
    // The account row lock serialises registrations of one account, so the limit holds under concurrency.
    await tx.execute(sql`select 1 from ${accounts} where id = ${owner.id} for no key update`);
    const [{ live } = { live: 0 }] = await tx.select({ live: count() }).from(webhookEndpoints).where(ownedBy(owner));
    if (live >= MAX_ENDPOINTS_PER_ACCOUNT) throw new AppError('webhook_limit');
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({ accountId: owner.id, livemode: owner.livemode, url: input.url, events, secretSealed: encrypt(codeKey, secret) })
      .returning(columns);
    return { ...shown(row!), secret };
  });
}

export async function listEndpoints(db: DbOrTx, owner: EndpointOwner): Promise<Endpoint[]> {
  const rows = await db.select(columns).from(webhookEndpoints).where(ownedBy(owner)).orderBy(webhookEndpoints.id);
  return rows.map(shown);
}

/** Deletes an endpoint: it gets nothing more, its past deliveries stay for the record. */
export async function deleteEndpoint(db: DbOrTx, owner: EndpointOwner, endpointId: number): Promise<void> {
  const rows = await db.update(webhookEndpoints).set({ deletedAt: sql`now()` }).where(own(owner, endpointId)).returning({ id: webhookEndpoints.id });
  if (rows.length === 0) throw notFound('webhook endpoint', 'id', endpointId);
}

/** Turns a disabled endpoint back on; its failing run starts afresh. */
export async function enableEndpoint(db: DbOrTx, owner: EndpointOwner, endpointId: number): Promise<Endpoint> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ enabled: true, failingSince: null, disabledAt: null })
    .where(own(owner, endpointId))
    .returning(columns);
  if (!row) throw notFound('webhook endpoint', 'id', endpointId);
  return shown(row);
}

/** Queues a `webhook.test` event to one endpoint, whatever its filter, so a client can check its receiver. */
export async function sendTestEvent(db: DbOrTx, owner: EndpointOwner, endpointId: number): Promise<{ delivery_id: number }> {
  const [row] = await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(own(owner, endpointId));
  if (!row) throw notFound('webhook endpoint', 'id', endpointId);
  const deliveryId = await recordEndpointEvent(db, { id: row.id, accountId: owner.id }, 'webhook.test', {
    endpoint_id: row.id,
    ...(owner.livemode ? {} : { livemode: false }),
  });
  return { delivery_id: deliveryId };
}
