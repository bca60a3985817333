import { z } from '@hono/zod-openapi';
import { id, idParam, requiredText, text } from '../../http/validation.js';
import { supplierUrlProblem } from '../../lib/supplier-url.js';
import { adminMoney, DeliveryStateSchema, listOf, moneyAmount, UtrParam } from '../../http/fields.js';
import { isDestinationTemplate } from '../suppliers/destination.js';
import { PROVIDER_KIND_NAMES } from '../suppliers/registry.js';

/** C22 request and response bodies: one schema per request. */

const httpUrl = requiredText(2000).superRefine((v, ctx) => {
  const problem = supplierUrlProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const credentials = z
  .record(text(100), requiredText(2000), { error: 'must be an object of strings.' })
  .openapi({ description: "The protocol's credentials (http: secret; digiflazz: username, api_key, webhook_secret). Sealed at rest, never shown again." });
const timeoutMs = z
  .number({ error: 'must be a whole number.' })
  .int({ error: 'must be a whole number.' })
  .min(100, { error: 'must be at least 100.' })
  .max(120_000, { error: 'must not be greater than 120000.' });
const providerStatus = z.enum(['active', 'disabled'], { error: 'must be active or disabled.' });
const threshold = moneyAmount(false).nullable().openapi({ description: 'provider.balance_low is sent when the balance falls below it; null: never' });

export const ProviderBody = z.object({
  name: requiredText(100),
  kind: z.enum(PROVIDER_KIND_NAMES, { error: `must be one of: ${PROVIDER_KIND_NAMES.join(', ')}.` }),
  base_url: httpUrl,
  credentials,
  timeout_ms: timeoutMs.optional(),
  status: providerStatus.optional(),
  balance_low_threshold: threshold.optional(),
});

/** Every field but the protocol may change; `credentials`, when sent, replace the stored ones whole. */
export const ProviderPatch = ProviderBody.omit({ kind: true }).partial();

export const Provider = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.string(),
    base_url: z.string(),
    timeout_ms: z.number().int(),
    status: z.string(),
    circuit: z.enum(['open', 'closed']).openapi({ description: 'open: new orders skip this provider until circuit_open_until' }),
    circuit_open_until: z.string().nullable(),
    last_error: z.string().nullable(),
    last_error_at: z.string().nullable(),
    balance: z.string().nullable().openapi({ description: 'The last balance read from the provider (where its protocol tells it)' }),
    balance_checked_at: z.string().nullable(),
    balance_low_threshold: z.string().nullable(),
    from_environment: z.boolean().openapi({ description: 'The TOPUP_PROVIDER=http provider, written from the environment at every start' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Provider');

const RouteInput = z.object({
  provider_id: id(),
  product_code: requiredText(100),
  cost: moneyAmount(false).nullable().optional().openapi({ description: 'What the provider charges for one delivery (the margin report)' }),
  destination: requiredText(200)
    .refine(isDestinationTemplate, { error: 'must be text with {field_name} placeholders, e.g. {user_id}{zone_id}.' })
    .nullable()
    .optional()
    .openapi({ description: "How the order's fields make the supplier's one destination, over the order form's field names (`{user_id}{zone_id}`)" }),
});

/** Checked entry by entry, so that a failure names the route (`routes.1.product code`). */
export const RoutesBody = listOf('routes', RouteInput, { max: 10, distinct: 'provider_id' }).openapi({
  description: 'The routes in priority order; [] leaves the service to an operator',
});

export const Route = z
  .object({
    position: z.number().int(),
    provider_id: z.number().int(),
    provider: z.string(),
    product_code: z.string(),
    cost: z.string().nullable(),
    destination: z.string().nullable(),
  })
  .openapi('TopUpRoute');

export const ProviderAttempt = z
  .object({
    id: z.number().int(),
    provider_id: z.number().int(),
    provider: z.string(),
    product_code: z.string(),
    base_url: z.string().nullable().openapi({ description: 'Where it was sent, and where its status queries go' }),
    destination: z.string().nullable(),
    cost: z.string().nullable(),
    outcome: z.enum(['sending', 'pending', 'unknown', 'completed', 'refused']),
    provider_reference: z.string().nullable(),
    detail: z.string().nullable(),
    status_queries: z.number().int(),
    started_at: z.string(),
    settled_at: z.string().nullable(),
    settled_by: z.enum(['provider', 'operator']).nullable(),
    settle_reason: z.string().nullable().openapi({ description: "The operator's reason, when an operator settled it" }),
  })
  .openapi('ProviderAttempt');

export const OrderWithAttempts = z
  .object({
    utr: z.string(),
    account_id: z.number().int(),
    kind: z.string(),
    livemode: z.boolean().openapi({ description: 'C25: false for an order of a test key' }),
    status: z.number().int(),
    total: adminMoney,
    currency: z.string(),
    rate: z.string().nullable().openapi({ description: 'C24: the rate the order was converted at; null in the store currency' }),
    refunded_amount: adminMoney,
    note: z.string().nullable(),
    informations: z.record(z.string(), z.string()).nullable(),
    fields: z
      .array(z.object({ name: z.string(), label: z.string(), type: z.enum(['text', 'select']), value: z.string() }))
      .nullable()
      .openapi({ description: "Top-ups: the order form's fields in the form's order, as suppliers get them" }),
    delivery: DeliveryStateSchema,
    awaiting_operator_since: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
    lines: z.array(z.record(z.string(), z.unknown())),
    attempts: z.array(ProviderAttempt),
  })
  .openapi('OrderWithAttempts');

/** A day (`2026-11-01`, midnight UTC) or an ISO 8601 instant with its offset; the calendar must hold it. */
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const isInstant = (v: string) => {
  const day = ISO_INSTANT.exec(v)?.[1];
  return day !== undefined && !day.startsWith('0000') && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day) && !Number.isNaN(Date.parse(v));
};
const instant = requiredText(40).refine(isInstant, { error: 'must be a date (YYYY-MM-DD) or an ISO 8601 date and time with its offset.' });

export const MarginQuery = z
  .object({ from: instant, to: instant })
  // Only once both are instants: a bad `from` is one message, not two.
  .refine((q) => !isInstant(q.from) || !isInstant(q.to) || Date.parse(q.from) < Date.parse(q.to), { error: 'The to field must be after from.', path: ['to'] });

const figures = { orders: z.number().int(), sales: z.string(), cost: z.string(), margin: z.string() };
export const MarginReport = z
  .object({
    from: z.string(),
    to: z.string(),
    currency: z.string().openapi({ description: 'The store currency, in which sales, cost and margin are given', example: 'USD' }),
    providers: z.array(z.object({ provider_id: z.number().int(), provider: z.string(), ...figures })),
    services: z.array(
      z.object({
        provider_id: z.number().int(),
        provider: z.string(),
        top_up_service_id: z.number().int(),
        service: z.string(),
        currency: z.string().openapi({ description: 'The currency these orders were charged in' }),
        rate: z.string().optional().openapi({ description: 'C24: the rate they were converted at; absent in the store currency' }),
        sales_in_currency: z.string().optional().openapi({ description: 'Their sales as charged, in their currency; absent in the store currency' }),
        ...figures,
      }),
    ),
    total: z.object(figures),
  })
  .openapi('MarginReport');

/** An order's provider attempt in the path (`/orders/:utr/attempts/:id/settle`). */
export const AttemptParams = UtrParam.extend(idParam('provider attempt').shape);

export const SettleAttemptBody = z.object({
  outcome: z.enum(['completed', 'refused'], { error: 'must be completed or refused.' }).openapi({
    description: 'What the provider did: completed (delivered), or refused (nothing delivered and nothing ever will be)',
  }),
  reason: requiredText(1000).openapi({ description: 'Why, as the operator found out (kept with the attempt)' }),
});

export const AttemptSettled = z
  .object({
    utr: z.string(),
    attempt_id: z.number().int(),
    outcome: z.enum(['completed', 'refused']),
    status: z.number().int().openapi({ description: 'The order status after it: 1 when completed; 0 while it goes on to its next route' }),
  })
  .openapi('AttemptSettled');

export const CallbackAccepted = z
  .object({ reference: z.string(), outcome: z.string(), result: z.enum(['applied', 'unchanged']) })
  .openapi('ProviderCallbackAccepted');
