/**
 * The whole data model. PostgreSQL is the source of truth; Redis only says what to do next.
 * Money is numeric(14,2) everywhere (read back as strings, never floats).
 * Secrets (secret keys, tokens, api keys) are stored as SHA-256 digests, purchase codes as keyed digests;
 * card codes are stored AES-256-GCM encrypted plus a keyed digest for de-duplication.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  type AnyPgColumn,
  type PgColumnBuilderBase,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  varchar,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

const money = (name: string) => numeric(name, { precision: 14, scale: 2 });
/** Timestamps are read as PostgreSQL's own text (microseconds kept); lib/time.ts turns them into ISO 8601. */
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'string' });
const createdAt = () => ts('created_at').notNull().defaultNow();
const updatedAt = () => ts('updated_at').notNull().defaultNow();
const id = () => integer('id').primaryKey().generatedAlwaysAsIdentity();
const bigId = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();

export type DiscountType = 'percentage' | 'flat';
export type CategoryType = 'top_up' | 'card';
export type ProductKind = CategoryType;

/** Pricing snapshot kept in `old_data` / `campaign_data` (campaign_data values are strings, as the spec shows). */
export type ServicePricing = { price: string; discount: string; discount_type: DiscountType; max_sell?: string };

export type OrderField = {
  field_value: string;
  field_name: string;
  field_placeholder: string;
  field_note: string;
  field_type: 'text' | 'select';
  option?: Record<string, string>;
  /** Text fields: a regular expression the whole value must match (C27), e.g. `[0-9]{6,12}` for a player id. */
  pattern?: string;
};

/**
 * One order-form field as a top-up order keeps it (C22): in the form's order, with the form's name and type as they
 * were when the order was placed, so a supplier gets the buyer's values however the form changes later.
 */
export type OrderFieldValue = { name: string; label: string; type: OrderField['field_type']; value: string };

/** How `orders.status` is stored (C8); modules/order-state/state.ts names the values and owns the moves between them. */
export type OrderStatusCode = 0 | 1 | 2 | 3;

export type ProductImage = { image: string; image_driver: string; preview: string; preview_driver: string };

// ───────────────────────────── installation ─────────────────────────────

/** Facts about this installation, e.g. the fingerprint of the key that seals card codes (C20). */
export const installation = pgTable('installation', {
  name: varchar('name', { length: 60 }).primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

// ───────────────────────────── accounts and credentials ─────────────────────────────

export const accounts = pgTable(
  'accounts',
  {
    id: id(),
    firstname: varchar('firstname', { length: 100 }).notNull(),
    lastname: varchar('lastname', { length: 100 }).notNull(),
    username: varchar('username', { length: 100 }).notNull(),
    email: varchar('email', { length: 255 }),
    image: text('image'),
    imageDriver: varchar('image_driver', { length: 20 }).notNull().default('local'),
    balance: money('balance').notNull().default('0'),
    currency: varchar('currency', { length: 3 }).notNull(),
    currencySymbol: varchar('currency_symbol', { length: 8 }).notNull(),
    publicKey: varchar('public_key', { length: 64 }).notNull(),
    secretKeyHash: bytea('secret_key_hash').notNull(),
    apiKeyHash: bytea('api_key_hash'),
    profileHeading: text('profile_heading'),
    profileDescription: text('profile_description'),
    contactEmail: varchar('contact_email', { length: 255 }),
    socialLinks: jsonb('social_links').$type<Record<string, string>>().notNull().default({}),
    avatar: text('avatar'),
    cover: text('cover'),
    lastSeenAt: ts('last_seen_at'),
    /** Orders placed, per kind: the totals of the order lists without counting rows (kept by placement). */
    topUpOrderCount: integer('top_up_order_count').notNull().default(0),
    cardOrderCount: integer('card_order_count').notNull().default(0),
    /** C24: the account's price tier (its prices), none for the catalog price. */
    priceTierId: integer('price_tier_id').references((): AnyPgColumn => priceTiers.id),
    /** C25: the balance test-mode orders are paid from; none until the account's first test token (then 1,000.00). */
    testBalance: money('test_balance'),
    /** C26: the addresses and CIDR ranges its requests may come from; empty allows any. */
    allowedIps: text('allowed_ips').array().notNull().default(sql`'{}'::text[]`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('accounts_public_key_uq').on(t.publicKey),
    uniqueIndex('accounts_api_key_hash_uq').on(t.apiKeyHash),
    uniqueIndex('accounts_username_uq').on(t.username),
    // The accounts of a tier (its count in the tier list) and of a currency (a new symbol).
    index('accounts_price_tier_idx').on(t.priceTierId).where(sql`${t.priceTierId} is not null`),
    index('accounts_currency_idx').on(t.currency),
    check('accounts_balance_non_negative', sql`${t.balance} >= 0`),
    check('accounts_test_balance_non_negative', sql`${t.testBalance} >= 0`),
  ],
);

// ───────────────────────────── prices per account (C24) ─────────────────────────────

/** A rate: units of a currency per one unit of the store currency, up to 8 decimals. */
const rate = (name: string) => numeric(name, { precision: 18, scale: 8 });

/** A price tier: a percentage off the catalog price, and per-service prices of its own (price_tier_prices). */
export const priceTiers = pgTable(
  'price_tiers',
  {
    id: id(),
    name: varchar('name', { length: 100 }).notNull(),
    percentOff: numeric('percent_off', { precision: 5, scale: 2 }).notNull().default('0'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('price_tiers_name_uq').on(t.name),
    check('price_tiers_percent_off_ck', sql`${t.percentOff} >= 0 and ${t.percentOff} <= 100`),
  ],
);

/** A tier's own price of one service, in the store currency: it replaces the catalog price less percent_off. */
export const priceTierPrices = pgTable(
  'price_tier_prices',
  {
    tierId: integer('tier_id')
      .notNull()
      .references(() => priceTiers.id),
    topUpServiceId: integer('top_up_service_id').references(() => topUpServices.id),
    cardServiceId: integer('card_service_id').references(() => cardServices.id),
    price: money('price').notNull(),
  },
  (t) => [
    uniqueIndex('price_tier_prices_top_up_uq').on(t.tierId, t.topUpServiceId),
    uniqueIndex('price_tier_prices_card_uq').on(t.tierId, t.cardServiceId),
    check('price_tier_prices_one_service_ck', sql`(${t.topUpServiceId} is null) <> (${t.cardServiceId} is null)`),
    check('price_tier_prices_price_ck', sql`${t.price} >= 0`),
  ],
);

/**
 * The currencies accounts may be in besides the store currency (STORE_CURRENCY, whose rate is 1 and has no row), at
 * the rate an operator set: units of the currency per one store-currency unit.
 */
export const currencies = pgTable(
  'currencies',
  {
    code: varchar('code', { length: 3 }).primaryKey(),
    rate: rate('rate').notNull(),
    symbol: varchar('symbol', { length: 8 }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [check('currencies_rate_ck', sql`${t.rate} > 0`)],
);

export type KeyMode = 'live' | 'test';
export type KeyScope = 'full' | 'read';

/**
 * An account's key pairs (C25, C26): each exchanges for tokens of its mode and scope until it is revoked. The pair an
 * account was opened with is its first live, full key (and stays in `accounts` for processes of the previous release).
 */
export const accountKeys = pgTable(
  'account_keys',
  {
    id: id(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    publicKey: varchar('public_key', { length: 64 }).notNull(),
    secretKeyHash: bytea('secret_key_hash').notNull(),
    mode: varchar('mode', { length: 4 }).$type<KeyMode>().notNull().default('live'),
    scope: varchar('scope', { length: 4 }).$type<KeyScope>().notNull().default('full'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('account_keys_public_key_uq').on(t.publicKey),
    index('account_keys_account_idx').on(t.accountId),
    check('account_keys_mode_ck', sql`${t.mode} in ('live', 'test')`),
    check('account_keys_scope_ck', sql`${t.scope} in ('full', 'read')`),
  ],
);

export const authTokens = pgTable(
  'auth_tokens',
  {
    id: bigId(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The key it was exchanged for (null: a token of the previous release, of the account's first key). */
    keyId: integer('key_id').references(() => accountKeys.id, { onDelete: 'cascade' }),
    tokenHash: bytea('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('auth_tokens_hash_uq').on(t.tokenHash),
    index('auth_tokens_account_idx').on(t.accountId),
    // Retention (C23): when a token ended, expired or revoked (least() skips a null).
    index('auth_tokens_ended_idx').on(sql`least(${t.expiresAt}, ${t.revokedAt})`),
  ],
);

/** Every change of a balance, signed. Invariant: accounts.balance = sum(amount) per account. */
export const balanceLedger = pgTable(
  'balance_ledger',
  {
    id: bigId(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    amount: money('amount').notNull(),
    balanceAfter: money('balance_after').notNull(),
    kind: varchar('kind', { length: 16 }).$type<'deposit' | 'adjustment' | 'order_debit' | 'order_refund'>().notNull(),
    /**
     * The account's currency when the entry was written. Empty on entries written before it was kept (migration
     * 0009): those moved in the account's currency as it still is, which the statement shows for them.
     */
    currency: varchar('currency', { length: 3 }),
    orderId: bigint('order_id', { mode: 'number' }).references(() => orders.id),
    reason: text('reason'),
    /** C25: false for the test balance's entries (test orders, an operator setting it): the statement of test tokens. */
    livemode: boolean('livemode').notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [
    index('balance_ledger_account_idx').on(t.accountId, t.livemode, t.id),
    // One debit and at most one refund per order, enforced by the database.
    uniqueIndex('balance_ledger_order_kind_uq')
      .on(t.orderId, t.kind)
      .where(sql`${t.orderId} is not null`),
  ],
);

// ───────────────────────────── catalog ─────────────────────────────

export const categories = pgTable(
  'categories',
  {
    id: id(),
    name: varchar('name', { length: 120 }).notNull(),
    icon: varchar('icon', { length: 120 }).notNull(),
    type: varchar('type', { length: 8 }).$type<CategoryType>().notNull(),
    status: smallint('status').notNull().default(1),
    sortBy: integer('sort_by').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [check('categories_type_ck', sql`${t.type} in ('top_up', 'card')`)],
);

/**
 * The columns both product tables share, in table order; each table's own columns are passed in and kept
 * where they stand (after `image`, after `avg_rating`), so neither table's column order changes.
 */
const productColumns = <AfterImage extends Record<string, PgColumnBuilderBase>, AfterRating extends Record<string, PgColumnBuilderBase>>({
  instantDeliveryDefault,
  afterImage,
  afterRating,
}: {
  instantDeliveryDefault: number;
  afterImage: AfterImage;
  afterRating: AfterRating;
}) => ({
  id: id(),
  categoryId: integer('category_id')
    .notNull()
    .references(() => categories.id),
  name: varchar('name', { length: 160 }).notNull(),
  slug: varchar('slug', { length: 160 }).notNull(),
  region: varchar('region', { length: 120 }).notNull().default('Global'),
  note: text('note'),
  status: smallint('status').notNull().default(1),
  instantDelivery: smallint('instant_delivery').notNull().default(instantDeliveryDefault),
  image: jsonb('image').$type<ProductImage>().notNull(),
  ...afterImage,
  description: text('description').notNull().default(''),
  guide: text('guide').notNull().default(''),
  totalReview: integer('total_review').notNull().default(0),
  avgRating: numeric('avg_rating', { precision: 3, scale: 2 }).notNull().default('0'),
  ...afterRating,
  sortBy: smallint('sort_by').notNull().default(1),
  deletedAt: ts('deleted_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const topUps = pgTable(
  'top_ups',
  productColumns({
    instantDeliveryDefault: 0,
    afterImage: { orderInformation: jsonb('order_information').$type<OrderField[]>().notNull().default([]) },
    afterRating: {},
  }),
  (t) => [uniqueIndex('top_ups_slug_uq').on(t.slug), index('top_ups_category_idx').on(t.categoryId)],
);

const serviceColumns = () => ({
  id: id(),
  name: varchar('name', { length: 160 }).notNull(),
  image: text('image').notNull().default(''),
  imageDriver: varchar('image_driver', { length: 20 }).notNull().default('local'),
  price: money('price').notNull(),
  discount: money('discount').notNull().default('0'),
  discountType: varchar('discount_type', { length: 10 }).$type<DiscountType>().notNull().default('flat'),
  status: smallint('status').notNull().default(1),
  isOffered: smallint('is_offered').notNull().default(0),
  offeredSell: integer('offered_sell').notNull().default(0),
  maxSell: integer('max_sell').notNull().default(0),
  sortBy: integer('sort_by').notNull().default(0),
  oldData: jsonb('old_data').$type<ServicePricing>(),
  campaignData: jsonb('campaign_data').$type<ServicePricing>(),
  /** The campaign whose pricing the service carries while `is_offered = 1` (C9); null otherwise. */
  campaignId: integer('campaign_id').references(() => campaigns.id),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const topUpServices = pgTable(
  'top_up_services',
  {
    ...serviceColumns(),
    topUpId: integer('top_up_id')
      .notNull()
      .references(() => topUps.id),
    /**
     * When an operator last set the service's routes (C22): from then on an empty list means the operator fulfils its
     * orders by hand; a service never given routes has the TOPUP_PROVIDER provider as its one implicit route.
     */
    routesSetAt: ts('routes_set_at'),
  },
  (t) => [
    index('top_up_services_top_up_idx').on(t.topUpId),
    check('top_up_services_cap_ck', sql`${t.offeredSell} <= ${t.maxSell} or ${t.isOffered} = 0`),
    check('top_up_services_discount_type_ck', sql`${t.discountType} in ('percentage', 'flat')`),
  ],
);

export const cards = pgTable(
  'cards',
  productColumns({
    instantDeliveryDefault: 1,
    afterImage: {},
    afterRating: {
      sellCount: integer('sell_count').notNull().default(0),
      trending: smallint('trending').notNull().default(0),
    },
  }),
  (t) => [uniqueIndex('cards_slug_uq').on(t.slug), index('cards_category_idx').on(t.categoryId)],
);

export const cardServices = pgTable(
  'card_services',
  {
    ...serviceColumns(),
    cardId: integer('card_id')
      .notNull()
      .references(() => cards.id),
    /** Operators get `stock.low` when the unassigned codes fall below this; 0 turns the alert off (C17). */
    lowStockThreshold: integer('low_stock_threshold').notNull().default(0),
    /** Set when the alert went out for the current crossing, cleared once stock is back at the threshold. */
    lowStockAlerted: boolean('low_stock_alerted').notNull().default(false),
    /** stock.low alerts raised so far: a count of its own, since retention deletes the events (C23). */
    lowStockAlerts: integer('low_stock_alerts').notNull().default(0),
  },
  (t) => [
    index('card_services_card_idx').on(t.cardId),
    check('card_services_low_stock_threshold_ck', sql`${t.lowStockThreshold} >= 0`),
    check('card_services_cap_ck', sql`${t.offeredSell} <= ${t.maxSell} or ${t.isOffered} = 0`),
    check('card_services_discount_type_ck', sql`${t.discountType} in ('percentage', 'flat')`),
  ],
);

/**
 * Card sales not yet added to `cards.sell_count`. Fulfilment appends here instead of updating the card row, so
 * concurrent fulfilments of one card never queue on its lock; a timer in the worker processes folds the rows in.
 */
export const cardSales = pgTable('card_sales', {
  id: bigId(),
  cardId: integer('card_id')
    .notNull()
    .references(() => cards.id),
  sold: integer('sold').notNull(),
});

/** Inventory. A code is assigned to at most one order line, ever (order_line_id set once). */
export const cardCodes = pgTable(
  'card_codes',
  {
    id: bigId(),
    cardServiceId: integer('card_service_id')
      .notNull()
      .references(() => cardServices.id),
    /** AES-256-GCM: iv(12) | tag(16) | ciphertext. */
    codeEncrypted: bytea('code_encrypted').notNull(),
    /** HMAC-SHA256(key, code): finds duplicates on import without decrypting. */
    codeDigest: bytea('code_digest').notNull(),
    orderLineId: bigint('order_line_id', { mode: 'number' }).references(() => orderLines.id),
    assignedAt: ts('assigned_at'),
    /** C25: false for the generated codes of test orders, written already given out; never stock. */
    livemode: boolean('livemode').notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('card_codes_service_digest_uq').on(t.cardServiceId, t.codeDigest),
    // The hot path: "next free codes of this service", oldest first.
    index('card_codes_available_idx')
      .on(t.cardServiceId, t.id)
      .where(sql`${t.orderLineId} is null`),
    // The newest stock code a service has given out (its last entry), where the walk for free codes starts: the index
    // above keeps an entry for every code taken until the table is vacuumed, which a walk from its start would step
    // over. Test orders' codes are left out: written later, already given out, they would put it past the free ones.
    index('card_codes_taken_idx')
      .on(t.cardServiceId, t.id)
      .where(sql`${t.orderLineId} is not null and ${t.livemode}`),
    index('card_codes_order_line_idx').on(t.orderLineId),
  ],
);

export const campaigns = pgTable('campaigns', {
  id: id(),
  name: varchar('name', { length: 160 }).notNull(),
  startDate: date('start_date', { mode: 'string' }).notNull(),
  endDate: date('end_date', { mode: 'string' }).notNull(),
  status: smallint('status').notNull().default(1),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

const campaignServiceColumns = () => ({
  campaignId: integer('campaign_id')
    .notNull()
    .references(() => campaigns.id, { onDelete: 'cascade' }),
  price: money('price').notNull(),
  discount: money('discount').notNull().default('0'),
  discountType: varchar('discount_type', { length: 10 }).$type<DiscountType>().notNull().default('flat'),
  maxSell: integer('max_sell').notNull(),
  /** Set when the service reached max_sell and left the campaign; it is not listed any more. */
  leftAt: ts('left_at'),
  /**
   * The units the service sold at this campaign's price, as of when it last left it (paused, ended, overtaken or at
   * its cap): if the campaign applies again, its `offered_sell` takes up from here rather than from 0.
   */
  sold: integer('sold').notNull().default(0),
});

export const campaignTopUpServices = pgTable(
  'campaign_top_up_services',
  {
    ...campaignServiceColumns(),
    topUpServiceId: integer('top_up_service_id')
      .notNull()
      .references(() => topUpServices.id),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.topUpServiceId] })],
);

export const campaignCardServices = pgTable(
  'campaign_card_services',
  {
    ...campaignServiceColumns(),
    cardServiceId: integer('card_service_id')
      .notNull()
      .references(() => cardServices.id),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.cardServiceId] })],
);

export const gateways = pgTable('gateways', {
  id: id(),
  code: varchar('code', { length: 60 }).notNull(),
  name: varchar('name', { length: 120 }).notNull(),
  sortBy: integer('sort_by').notNull().default(0),
  image: text('image').notNull().default(''),
  driver: varchar('driver', { length: 20 }).notNull().default('local'),
  status: smallint('status').notNull().default(1),
  /** Public parameters only; credentials never live in this table. */
  parameters: jsonb('parameters').$type<Record<string, string>>().notNull().default({}),
  currencies: jsonb('currencies').$type<Record<string, Record<string, string>>>().notNull().default({}),
  extraParameters: jsonb('extra_parameters').$type<Record<string, string> | null>(),
  supportedCurrency: jsonb('supported_currency').$type<string[]>().notNull().default([]),
  receivableCurrencies: jsonb('receivable_currencies').$type<Record<string, string>[]>().notNull().default([]),
  description: text('description').notNull().default(''),
  currencyType: smallint('currency_type').notNull().default(1),
  isSandbox: smallint('is_sandbox').notNull().default(0),
  environment: varchar('environment', { length: 20 }).notNull().default('live'),
  isManual: smallint('is_manual'),
  note: text('note'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const reviews = pgTable(
  'reviews',
  {
    id: id(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    reviewableType: varchar('reviewable_type', { length: 8 }).$type<ProductKind>().notNull(),
    reviewableId: integer('reviewable_id').notNull(),
    rating: numeric('rating', { precision: 3, scale: 2 }).notNull(),
    comment: text('comment').notNull(),
    status: smallint('status').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('reviews_one_per_account_uq').on(t.accountId, t.reviewableType, t.reviewableId),
    index('reviews_target_idx').on(t.reviewableType, t.reviewableId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    check('reviews_rating_ck', sql`${t.rating} between 1 and 5`),
  ],
);

// ───────────────────────────── orders ─────────────────────────────

/** C8: 0 initiate, 1 completed, 2 refund, 3 stock_short. Transitions live in modules/order-state/state.ts. */
export const orders = pgTable(
  'orders',
  {
    id: bigId(),
    utr: varchar('utr', { length: 32 }).notNull(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    kind: varchar('kind', { length: 8 }).$type<ProductKind>().notNull(),
    /** The top-up ordered (top-up orders only); card orders name their cards per line. */
    topUpId: integer('top_up_id').references(() => topUps.id),
    status: smallint('status').$type<OrderStatusCode>().notNull().default(0),
    total: money('total').notNull(),
    currency: varchar('currency', { length: 3 }).notNull(),
    currencySymbol: varchar('currency_symbol', { length: 8 }).notNull(),
    /** C24: the rate the order's prices were converted at (units of its currency per store-currency unit); null when in the store currency. */
    rate: rate('rate'),
    /** Top-ups: form label → value the buyer gave, as the order lists show it (the spec's `informations`). */
    informations: jsonb('informations').$type<Record<string, string>>(),
    /**
     * Top-ups: the same values as suppliers get them, in the form's order with each field's name and type (`json`, not
     * `jsonb`, which would sort them). Null for orders placed before it was kept.
     */
    fields: json('fields').$type<OrderFieldValue[]>(),
    refundedAmount: money('refunded_amount').notNull().default('0'),
    note: text('note'),
    /**
     * Top-ups: set when the order is handed to an operator (no route left, or a supplier that has not settled its
     * attempt in PROVIDER_SETTLE_HOURS). Such an order is never sent by itself; the reconciler leaves it alone (C8).
     */
    awaitingOperatorSince: ts('awaiting_operator_since'),
    /**
     * Top-ups with provider routes (C22): how many times the routing came back to the order later (a status query
     * of an unknown outcome, a wait for an open circuit). Step n is the job `advance-<utr>-<n>`, so the reconciler
     * can tell a step whose job Redis lost.
     */
    routingStep: integer('routing_step').notNull().default(0),
    /** C25: false for an order placed with a test key: seen only by test tokens, fulfilled by the test rules. */
    livemode: boolean('livemode').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    uniqueIndex('orders_utr_uq').on(t.utr),
    // NULLS FIRST is what a plain `ORDER BY … DESC` means, so the newest-first lists can walk this index.
    index('orders_account_list_idx').on(t.accountId, t.livemode, t.kind, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('orders_status_idx').on(t.status, t.createdAt, t.id),
    // The reconciler's scan: accepted orders not yet moved on and not handed to an operator.
    index('orders_to_reconcile_idx')
      .on(t.createdAt, t.id)
      .where(sql`${t.status} = 0 and ${t.awaitingOperatorSince} is null`),
    index('orders_account_top_up_idx').on(t.accountId, t.topUpId),
    check('orders_status_ck', sql`${t.status} in (0, 1, 2, 3)`),
  ],
);

export const orderLines = pgTable(
  'order_lines',
  {
    id: bigId(),
    orderId: bigint('order_id', { mode: 'number' })
      .notNull()
      .references(() => orders.id),
    topUpServiceId: integer('top_up_service_id').references(() => topUpServices.id),
    cardServiceId: integer('card_service_id').references(() => cardServices.id),
    /** Denormalised for the one-review rule and order lists. */
    cardId: integer('card_id').references(() => cards.id),
    quantity: integer('quantity').notNull(),
    basePrice: money('base_price').notNull(),
    /** Discount per unit in money. */
    discount: money('discount').notNull(),
    unitPrice: money('unit_price').notNull(),
    /** Units sold at the campaign price (reserved against max_sell). */
    campaignUnits: integer('campaign_units').notNull().default(0),
    campaignUnitPrice: money('campaign_unit_price'),
    campaignId: integer('campaign_id').references(() => campaigns.id),
    lineTotal: money('line_total').notNull(),
    /** Card lines: codes still owed (C8 stock_short). */
    codesOwed: integer('codes_owed').notNull().default(0),
    /**
     * Card lines an assignment left short of codes: their order waits `stock_short` for them, and newer orders of the
     * service wait behind it (C8). Only lines still owed count (`codes_owed > 0`).
     */
    waiting: boolean('waiting').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    index('order_lines_order_idx').on(t.orderId),
    index('order_lines_card_service_owed_idx')
      .on(t.cardServiceId, t.orderId)
      .where(sql`${t.codesOwed} > 0`),
    // The orders waiting for a service's codes, found without reading the lines of a backlog still to be fulfilled.
    index('order_lines_waiting_idx')
      .on(t.cardServiceId, t.orderId)
      .where(sql`${t.codesOwed} > 0 and ${t.waiting}`),
    check('order_lines_quantity_ck', sql`${t.quantity} > 0`),
    // Added NOT VALID and validated after the migrations (src/db/migrate.ts): a line is never dealt more than it owes.
    check('order_lines_codes_owed_ck', sql`${t.codesOwed} >= 0`),
  ],
);

/** C15: an Idempotency-Key remembers the first answer for 24 h. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    key: varchar('key', { length: 260 }).notNull(),
    endpoint: varchar('endpoint', { length: 40 }).notNull(),
    requestDigest: bytea('request_digest').notNull(),
    responseStatus: smallint('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
);

// ───────────────────────────── license API (Interface B) ─────────────────────────────

export type MediaKind = 'image' | 'audio' | 'video';

export const licenseItems = pgTable(
  'license_items',
  {
    id: id(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    name: varchar('name', { length: 200 }).notNull(),
    description: text('description').notNull().default(''),
    category: varchar('category', { length: 120 }).notNull(),
    subCategory: varchar('sub_category', { length: 120 }).notNull().default(''),
    options: jsonb('options').$type<string[]>().notNull().default([]),
    version: varchar('version', { length: 40 }).notNull(),
    demoLink: text('demo_link').notNull().default(''),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    mediaKind: varchar('media_kind', { length: 8 }).$type<MediaKind>().notNull(),
    thumbnail: text('thumbnail').notNull(),
    previewImage: text('preview_image'),
    previewVideo: text('preview_video'),
    previewAudio: text('preview_audio'),
    screenshots: jsonb('screenshots').$type<string[]>().notNull().default([]),
    priceRegular: money('price_regular').notNull(),
    priceExtended: money('price_extended').notNull(),
    currency: varchar('currency', { length: 3 }).notNull(),
    publishedAt: ts('published_at').notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('license_items_account_idx').on(t.accountId, t.id),
    check('license_items_media_kind_ck', sql`${t.mediaKind} in ('image', 'audio', 'video')`),
  ],
);

/** A license item as the API and the demo data create it. */
export type NewLicenseItem = {
  accountId: number;
  name: string;
  description?: string;
  category: string;
  subCategory?: string;
  options?: string[];
  version: string;
  demoLink?: string;
  tags?: string[];
  mediaKind: MediaKind;
  thumbnail: string;
  previewImage?: string | null;
  previewVideo?: string | null;
  previewAudio?: string | null;
  screenshots?: string[];
  priceRegular: string;
  priceExtended: string;
  currency: string;
  publishedAt?: string;
};

export const licensePurchases = pgTable(
  'license_purchases',
  {
    id: id(),
    itemId: integer('item_id')
      .notNull()
      .references(() => licenseItems.id),
    /** SHA-256 of the purchase code; the code itself is never stored. */
    codeHash: bytea('code_hash').notNull(),
    licenseType: varchar('license_type', { length: 40 }).notNull().default('Regular'),
    price: money('price').notNull(),
    currency: varchar('currency', { length: 3 }).notNull(),
    supportedUntil: ts('supported_until'),
    downloaded: boolean('downloaded').notNull().default(false),
    purchasedAt: ts('purchased_at').notNull().defaultNow(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('license_purchases_code_hash_uq').on(t.codeHash), index('license_purchases_item_idx').on(t.itemId)],
);

// ───────────────────────────── webhooks (C17) ─────────────────────────────

export type WebhookEventType = 'order.completed' | 'order.stock_short' | 'order.refunded' | 'webhook.test' | 'stock.low' | 'provider.balance_low';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';

/** Where an account wants its events. Deleted endpoints stay (their deliveries keep their history). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: id(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    url: text('url').notNull(),
    /** The event types wanted; null: all of them. */
    events: text('events').array().$type<WebhookEventType[]>(),
    /** The signing secret (`whsec_…`), AES-256-GCM sealed with the code key: it is needed in clear to sign. */
    secretSealed: bytea('secret_sealed').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    /** C25: false for an endpoint registered with a test token: it gets the events of test orders, and only those. */
    livemode: boolean('livemode').notNull().default(true),
    /** Start of the current run of failed attempts; 5 days of it disable the endpoint. */
    failingSince: ts('failing_since'),
    disabledAt: ts('disabled_at'),
    deletedAt: ts('deleted_at'),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_endpoints_account_idx').on(t.accountId).where(sql`${t.deletedAt} is null`)],
);

/**
 * The outbox: one row per event, written in the same transaction as the change that causes it.
 * `account_id` null: an operator event (stock.low), delivered to ADMIN_WEBHOOK_URL.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: bigId(),
    type: varchar('type', { length: 40 }).$type<WebhookEventType>().notNull(),
    accountId: integer('account_id').references(() => accounts.id),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_events_account_idx').on(t.accountId, t.id),
    // Retention (C23) walks the events from the oldest, and finds at once that none is old enough.
    index('webhook_events_created_idx').on(t.createdAt, t.id),
  ],
);

/** One event on its way to one endpoint (endpoint null: the operators' ADMIN_WEBHOOK_URL). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigId(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEvents.id),
    endpointId: integer('endpoint_id').references(() => webhookEndpoints.id),
    status: varchar('status', { length: 10 }).$type<DeliveryStatus>().notNull().default('pending'),
    attempts: smallint('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    /** When the relay last handed it to the queue; a job Redis lost is handed again after a while. */
    enqueuedAt: ts('enqueued_at'),
    lastStatusCode: smallint('last_status_code'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    /** When it left `pending` (delivered, failed or skipped); retention counts from the last of an event's (C23). */
    finishedAt: ts('finished_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt, t.id).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_status_idx').on(t.status, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
    check('webhook_deliveries_status_ck', sql`${t.status} in ('pending', 'delivered', 'failed', 'skipped')`),
  ],
);

/** Every attempt, as the receiver answered it (status, time taken, the start of the body). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigId(),
    deliveryId: bigint('delivery_id', { mode: 'number' })
      .notNull()
      .references(() => webhookDeliveries.id),
    statusCode: smallint('status_code'),
    durationMs: integer('duration_ms').notNull(),
    responseExcerpt: text('response_excerpt'),
    error: text('error'),
    attemptedAt: createdAt(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.id)],
);

// ───────────────────────────── top-up suppliers (C22) ─────────────────────────────

export type ProviderKind = 'http' | 'digiflazz';
export type ProviderStatus = 'active' | 'disabled';

/** A top-up supplier the store buys from, speaking one protocol (`kind`). */
export const providers = pgTable(
  'providers',
  {
    id: id(),
    name: varchar('name', { length: 100 }).notNull(),
    kind: varchar('kind', { length: 16 }).$type<ProviderKind>().notNull(),
    baseUrl: text('base_url').notNull(),
    /** The protocol's credentials as JSON, AES-256-GCM sealed with the code key: needed in clear to sign, never shown. */
    credentialsSealed: bytea('credentials_sealed').notNull(),
    timeoutMs: integer('timeout_ms').notNull().default(10_000),
    status: varchar('status', { length: 8 }).$type<ProviderStatus>().notNull().default('active'),
    /** `provider.balance_low` is raised when the balance falls below it; null: never. */
    balanceLowThreshold: money('balance_low_threshold'),
    balance: money('balance'),
    balanceCheckedAt: ts('balance_checked_at'),
    /** Set when the balance fell below the threshold (the alert was raised); cleared when it is back: once per crossing. */
    balanceLowAlerted: boolean('balance_low_alerted').notNull().default(false),
    /** While in the future the circuit is open: new orders skip this provider (every process reads it here). */
    circuitOpenUntil: ts('circuit_open_until'),
    lastError: text('last_error'),
    lastErrorAt: ts('last_error_at'),
    /** The provider of TOPUP_PROVIDER=http: written by every start from TOPUP_PROVIDER_URL and _SECRET (at most one). */
    fromEnvironment: boolean('from_environment').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Names are unique whatever their case (the index decides, so concurrent creates cannot both pass).
    uniqueIndex('providers_name_uq').on(sql`lower(${t.name})`),
    uniqueIndex('providers_environment_uq').on(t.fromEnvironment).where(sql`${t.fromEnvironment}`),
    check('providers_kind_ck', sql`${t.kind} in ('http', 'digiflazz')`),
    check('providers_status_ck', sql`${t.status} in ('active', 'disabled')`),
    check('providers_timeout_ck', sql`${t.timeoutMs} between 100 and 120000`),
  ],
);

/** A top-up service's suppliers in priority order (position 0 first): the provider's product code and what it costs. */
export const topUpRoutes = pgTable(
  'top_up_routes',
  {
    topUpServiceId: integer('top_up_service_id')
      .notNull()
      .references(() => topUpServices.id),
    position: smallint('position').notNull(),
    providerId: integer('provider_id')
      .notNull()
      .references(() => providers.id),
    productCode: varchar('product_code', { length: 100 }).notNull(),
    cost: money('cost'),
    /** How the order's fields make the supplier's one destination (`{user_id}{zone_id}`, over the form's field names); null: the protocol's default. */
    destination: varchar('destination', { length: 200 }),
  },
  (t) => [
    primaryKey({ columns: [t.topUpServiceId, t.position] }),
    uniqueIndex('top_up_routes_provider_uq').on(t.topUpServiceId, t.providerId),
    index('top_up_routes_provider_idx').on(t.providerId),
  ],
);

/**
 * What a provider attempt came to: `sending` (recorded before the request left, so a crash mid-send is known),
 * `pending` and `unknown` (open: only a status query or a callback settles them), `completed`, `refused`.
 */
export type AttemptOutcome = 'sending' | 'pending' | 'unknown' | 'completed' | 'refused';

/**
 * Every time an order was sent to a provider (C22). At most one open attempt per order (the partial unique index),
 * and each provider at most once per order: an order is never with two providers at once, never sent to one twice.
 */
export const providerAttempts = pgTable(
  'provider_attempts',
  {
    id: bigId(),
    orderId: bigint('order_id', { mode: 'number' })
      .notNull()
      .references(() => orders.id),
    providerId: integer('provider_id')
      .notNull()
      .references(() => providers.id),
    productCode: varchar('product_code', { length: 100 }).notNull(),
    /**
     * The provider's address when the attempt was made: status queries ask there, whatever base_url becomes later.
     * Null only for attempts settled before it was kept.
     */
    baseUrl: text('base_url'),
    /** The route's destination when the attempt was made (see topUpRoutes.destination). */
    destination: varchar('destination', { length: 200 }),
    /**
     * The provider's timeout when the attempt was made: its request leaves within it or not at all, so a `sending`
     * attempt is only asked about (or refused by an operator) once it has passed. Null only for attempts settled before.
     */
    timeoutMs: integer('timeout_ms'),
    /** The route's cost when the attempt was made: what the store paid if it completed. */
    cost: money('cost'),
    outcome: varchar('outcome', { length: 10 }).$type<AttemptOutcome>().notNull().default('sending'),
    providerReference: varchar('provider_reference', { length: 200 }),
    /** Why it was refused, or what made it unknown (the last answer read). */
    detail: text('detail'),
    statusQueries: smallint('status_queries').notNull().default(0),
    startedAt: createdAt(),
    updatedAt: updatedAt(),
    settledAt: ts('settled_at'),
    /** Who settled it: the provider (an answer, a status query, a callback) or an operator (with `settle_reason`). */
    settledBy: varchar('settled_by', { length: 8 }).$type<'provider' | 'operator'>(),
    settleReason: text('settle_reason'),
  },
  (t) => [
    index('provider_attempts_order_idx').on(t.orderId, t.id),
    uniqueIndex('provider_attempts_open_uq').on(t.orderId).where(sql`${t.outcome} in ('sending', 'pending', 'unknown')`),
    uniqueIndex('provider_attempts_provider_uq').on(t.orderId, t.providerId),
    // The unsettled attempts per provider (metrics) and the delivered ones (the margin report).
    index('provider_attempts_open_idx').on(t.providerId).where(sql`${t.outcome} in ('sending', 'pending', 'unknown')`),
    index('provider_attempts_completed_idx').on(t.settledAt).where(sql`${t.outcome} = 'completed'`),
    check('provider_attempts_outcome_ck', sql`${t.outcome} in ('sending', 'pending', 'unknown', 'completed', 'refused')`),
    check('provider_attempts_settled_by_ck', sql`${t.settledBy} in ('provider', 'operator')`),
  ],
);
