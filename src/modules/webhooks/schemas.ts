import { z } from '@hono/zod-openapi';
import { pageQuery, requiredText } from '../../http/validation.js';
import { STATUS_LABELS, type OrderStatusLabel } from '../order-state/state.js';
import { CLIENT_EVENTS } from './endpoints.js';

const EventType = z.enum(CLIENT_EVENTS, { error: `must be one of ${CLIENT_EVENTS.join(', ')}.` });

/** C17: POST /api/webhooks. `events` filters what the endpoint gets; omitted, it gets every event. */
export const RegisterEndpointBody = z
  .object({
    url: requiredText(2048).openapi({ example: 'https://shop.example.com/hooks/topup' }),
    events: z
      .array(EventType, { error: 'must be a list of event types.' })
      .min(1)
      .optional()
      .openapi({ example: ['order.completed', 'order.refunded'] }),
  })
  .openapi('RegisterWebhookEndpoint');

export const WebhookEndpoint = z
  .object({
    id: z.number().int(),
    url: z.string(),
    events: z.array(EventType),
    enabled: z.boolean().openapi({ description: 'false once its deliveries have failed for 5 days; re-enable it with POST …/enable' }),
    failing_since: z.string().nullable(),
    disabled_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('WebhookEndpoint');

export const NewWebhookEndpoint = WebhookEndpoint.extend({
  secret: z.string().openapi({ description: 'The signing secret, shown this once', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).openapi('NewWebhookEndpoint');

export const TestEventQueued = z.object({ delivery_id: z.number().int() }).openapi('WebhookTestQueued');

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;

export const ListDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}.` }).optional(),
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
});

export const WebhookDelivery = z
  .object({
    id: z.number().int(),
    event_id: z.number().int(),
    type: z.string(),
    account_id: z.number().int().nullable().openapi({ description: 'null: an operator event (stock.low)' }),
    endpoint_id: z.number().int().nullable(),
    url: z.string().nullable(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('WebhookDelivery');

const StatusLabel = z.enum(Object.values(STATUS_LABELS) as [OrderStatusLabel, ...OrderStatusLabel[]]);
const notLive = z.literal(false).optional().openapi({ description: 'Present (false) only on events of test-mode orders and endpoints (C25)' });
const timestamp = z.string().openapi({ example: '2026-11-24T07:40:12.123456Z' });

/** C17: the body of every order event, as signed and sent (never card codes). */
export const OrderEvent = z
  .object({
    type: EventType,
    timestamp,
    data: z.object({
      utr: z.string(),
      kind: z.enum(['card', 'top_up']),
      status: z.number().int().openapi({ description: '0 initiate, 1 completed, 2 refund, 3 stock_short' }),
      status_label: StatusLabel,
      previous_status: z.number().int(),
      price: z.number().openapi({ description: "The order's total, in the account's currency" }),
      currency: z.string(),
      rate: z.string().optional().openapi({ description: "Only for an order in another currency than the store's (C24)" }),
      livemode: notLive,
    }),
  })
  .openapi('OrderEvent', {
    example: {
      type: 'order.completed',
      timestamp: '2026-11-24T07:40:12.123456Z',
      data: { utr: 'C0MWT6AW5N89FD612DA6B49BED', kind: 'card', status: 1, status_label: 'completed', previous_status: 0, price: 28.4, currency: 'USD' },
    },
  });

/** The event POST /api/webhooks/:id/test sends. */
export const TestEvent = z
  .object({ type: z.literal('webhook.test'), timestamp, data: z.object({ endpoint_id: z.number().int(), livemode: notLive }) })
  .openapi('WebhookTestEvent');
