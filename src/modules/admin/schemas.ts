import { z } from '@hono/zod-openapi';
import { adminMoney, DeliveryStateSchema, moneyAmount } from '../../http/fields.js';
import { id, keyOf, pageQuery, requiredText, text } from '../../http/validation.js';
import type { DeliveryState } from '../order-state/delivery.js';
import { parseStatus } from '../order-state/state.js';
import { isAllowListEntry } from '../../lib/allow-list.js';

// The delivery states the document names are the state machine's, neither more nor fewer: a compile error otherwise.
type DocumentedDeliveryState = NonNullable<z.infer<typeof DeliveryStateSchema>>;
void (true satisfies [DocumentedDeliveryState, DeliveryState] extends [DeliveryState, DocumentedDeliveryState] ? true : false);

export const CreateAccountBody = z.object({
  firstname: requiredText(100),
  lastname: requiredText(100),
  email: z.email({ error: 'must be a valid email address.' }).max(255).optional(),
  currency: z
    .string({ error: 'must be a 3-letter currency code.' })
    .regex(/^[A-Z]{3}$/, { error: 'must be a 3-letter currency code.' })
    .optional(),
  balance: moneyAmount(false).optional(),
});

/** C24: an account's price tier (null: the catalog price) and, at a zero balance, its currency; C26: its allow-list. */
export const AccountPatch = z.object({
  price_tier_id: id().nullable().optional().openapi({ description: 'The price tier; null for the catalog price' }),
  currency: CreateAccountBody.shape.currency,
  allowed_ips: z
    .array(z.string({ error: 'must be a list of addresses.' }), { error: 'must be a list of addresses.' })
    .max(100, { error: 'must not have more than 100 items.' })
    .superRefine((entries, ctx) => {
      const wrong = entries.find((entry) => !isAllowListEntry(entry));
      if (wrong !== undefined) {
        ctx.addIssue({ code: 'custom', message: `The allowed ips field must hold IPv4 or IPv6 addresses and CIDR ranges: ${JSON.stringify(wrong.slice(0, 64))} is neither.` });
      }
    })
    .optional()
    .openapi({
      description: 'The addresses and CIDR ranges its requests may come from (token exchange and every Interface A request); [] allows any',
      example: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'],
    }),
});

/** C25/C26: a new key pair's mode (required: a forgotten one must not mint a key that spends real money) and scope. */
export const NewKeyBody = z.object({
  mode: z.enum(['live', 'test'], { error: 'must be live or test.' }),
  scope: z.enum(['full', 'read'], { error: 'must be full or read.' }).default('full'),
});

export const KeyParams = z.object({
  id: keyOf('account', id()),
  public_key: keyOf('key', text(64), 'public key'),
});

export const NewKey = z
  .object({
    public_key: z.string(),
    secret_key: z.string().openapi({ description: 'Shown this once' }),
    mode: z.enum(['live', 'test']),
    scope: z.enum(['full', 'read']),
  })
  .openapi('NewKey');

export const AccountKey = z
  .object({
    public_key: z.string(),
    mode: z.enum(['live', 'test']),
    scope: z.enum(['full', 'read']),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi('AccountKey');

export const KeyRevoked = z.object({ public_key: z.string(), revoked_at: z.string() }).openapi('KeyRevoked');

export const AccountSettings = z
  .object({
    id: z.number().int(),
    price_tier_id: z.number().int().nullable(),
    currency: z.string(),
    currency_symbol: z.string(),
    allowed_ips: z.array(z.string()),
  })
  .openapi('AccountSettings');

export const AdjustBalanceBody = z.object({
  amount: moneyAmount(true).refine((v) => !/^-?0+(\.0+)?$/.test(v), { error: 'must not be zero.' }),
  reason: requiredText(500),
});

export const ImportCodesBody = z.object({
  codes: z
    .array(text(500).min(1, { error: 'must not contain blank codes.' }), { error: 'must be a list of strings.' })
    .min(1)
    .max(10_000, { error: 'must not have more than 10000 items.' }),
});

export const ListOrdersQuery = z.object({
  status: text(20)
    .transform((v, ctx) => {
      const status = parseStatus(v);
      if (status === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be one of initiate, completed, refund, stock_short or 0 to 3.' });
        return z.NEVER;
      }
      return status;
    })
    .optional(),
  mode: z
    .enum(['live', 'test', 'all'], { error: 'must be live, test or all.' })
    .default('live')
    .openapi({ description: 'C25: live orders (the default), test orders (of test keys), or both' }),
  page: pageQuery().optional(),
  per_page: pageQuery().optional(),
});

/** C25: what an operator sets an account's test balance to. */
export const TestBalanceBody = z.object({ amount: moneyAmount(false) });

export const TestBalance = z.object({ id: z.number().int(), test_balance: z.string() }).openapi('TestBalance');

export const CompleteOrderBody = z.object({ note: requiredText(1000).optional() });

export const RefundOrderBody = z.object({ reason: requiredText(1000) });

// ───────────────────────────── responses (C13) ─────────────────────────────

export const NewAccount = z
  .object({
    id: z.number().int(),
    publicKey: z.string(),
    secretKey: z.string().openapi({ description: 'Shown this once' }),
    apiKey: z.string().openapi({ description: 'Shown this once' }),
  })
  .openapi('NewAccount');

export const Balance = z.object({ balance: z.number() }).openapi('Balance');

export const ImportResult = z
  .object({
    added: z.number().int(),
    skipped: z.number().int(),
    fulfilled_orders: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Waiting stock_short orders the new codes completed; null when their restock still ran after 10 s (it finishes in the background)' }),
  })
  .openapi('ImportResult');

export const Stock = z
  .object({ available: z.number().int(), reserved_for_stock_short: z.number().int() })
  .openapi('Stock');

export const AdminOrder = z
  .object({
    id: z.number().int(),
    utr: z.string(),
    account_id: z.number().int(),
    kind: z.enum(['top_up', 'card']),
    status: z.number().int(),
    status_label: z.enum(['initiate', 'completed', 'refund', 'stock_short']),
    price: adminMoney,
    refunded_amount: adminMoney,
    currency: z.string(),
    symbol: z.string(),
    rate: z.string().nullable().openapi({ description: 'C24: the rate the order was converted at; null in the store currency' }),
    livemode: z.boolean().openapi({ description: 'C25: false for an order of a test key' }),
    informations: z.record(z.string(), z.string()).nullable(),
    note: z.string().nullable(),
    delivery: DeliveryStateSchema,
    awaiting_operator_since: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
    lines: z.array(
      z.object({
        card_service_id: z.number().int().nullable(),
        top_up_service_id: z.number().int().nullable(),
        quantity: z.number().int(),
        unit_price: adminMoney,
        line_total: adminMoney,
        campaign_units: z.number().int(),
        codes_owed: z.number().int(),
      }),
    ),
  })
  .openapi('AdminOrder');

export const OrderMoved = z.object({ utr: z.string(), status: z.number().int() }).openapi('OrderMoved');
export const OrderRefunded = OrderMoved.extend({ refunded_amount: adminMoney }).openapi('OrderRefunded');
