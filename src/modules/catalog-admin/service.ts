import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { refusedWhenTaken, retryingConflicts } from '../../db/conflicts.js';
import { ACTIVE, liveProduct, PRODUCT_KINDS } from '../../db/kinds.js';
import {
  cardServices,
  cards,
  categories,
  gateways,
  topUpServices,
  topUps,
  type CategoryType,
  type DiscountType,
  type OrderField,
  type ProductImage,
  type ProductKind,
} from '../../db/schema.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { fromCents, toCents } from '../../lib/money.js';
import type { Services } from '../../runtime/services.js';
import { createTier, setCurrency, setTierPrices, tierById, updateTier, type CurrencyRow, type Tier } from '../prices/service.js';
import { noteStockLevels } from '../inventory/low-stock.js';
import { toSnapshot, type PriceFields } from '../campaigns/pricing.js';
import type { CardRow, CardServiceRow, CategoryRow, GatewayRow, TopUpRow, TopUpServiceRow } from '../catalog/service.js';

/**
 * Store management (C19): operators create and change the catalog. Every change is one transaction, and once it
 * has committed every process drops its catalog cache, so the next catalog read anywhere shows it.
 */

export type CatalogAdminDeps = Pick<Services, 'db' | 'catalogCache' | 'orderPages'>;

/** 1 shown and sold, 0 out of the catalog (its orders and reviews stay). */
export type Status = 0 | 1;

/**
 * Runs one change (again when PostgreSQL gave it up for a deadlock), then invalidates the catalog everywhere, and every
 * order list page (their entries show the products' names, images and ratings, and the services' names).
 */
export async function change<T>({ db, catalogCache, orderPages }: CatalogAdminDeps, work: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await retryingConflicts(() => db.transaction(work));
  await Promise.all([catalogCache.invalidate(), orderPages.allChanged()]);
  return result;
}

/** The one row `rows` should hold, or 404: the id in the URL names no `what`. */
export async function found<T>(rows: Promise<T[]>, what: string, id: number): Promise<T> {
  const [row] = await rows;
  if (row === undefined) throw notFound(what, 'id', id);
  return row;
}

// ───────────────────────────── categories ─────────────────────────────

export type CategoryInput = { name?: string; icon?: string; type?: CategoryType; status?: Status };
export type CategoryView = CategoryRow & { activeChildren: number };

async function categoryView(tx: Tx, row: CategoryRow): Promise<CategoryView> {
  const { product } = PRODUCT_KINDS[row.type];
  const [live] = await tx
    .select({ n: count() })
    .from(product)
    .where(and(eq(product.categoryId, row.id), liveProduct(row.type)));
  return { ...row, activeChildren: live?.n ?? 0 };
}

export const createCategory = (deps: CatalogAdminDeps, input: CategoryInput & { name: string; type: CategoryType }) =>
  change(deps, async (tx) => {
    const [row] = await tx.insert(categories).values({ ...input, icon: input.icon ?? '' }).returning();
    return categoryView(tx, row!);
  });

/**
 * A category's products are all of its type, so the type changes only while it holds none. The row lock waits
 * for products being added to it (they hold it in key share while they check its type).
 */
export const updateCategory = (deps: CatalogAdminDeps, id: number, input: CategoryInput) =>
  change(deps, async (tx) => {
    const current = await found(tx.select().from(categories).where(eq(categories.id, id)).for('update'), 'category', id);
    if (input.type !== undefined && input.type !== current.type) {
      const { product } = PRODUCT_KINDS[current.type];
      const [held] = await tx.select({ id: product.id }).from(product).where(eq(product.categoryId, id)).limit(1);
      if (held) throw new AppError('category_in_use');
    }
    const [row] = await tx.update(categories).set({ ...input, updatedAt: sql`now()` }).where(eq(categories.id, id)).returning();
    return categoryView(tx, row!);
  });

// ───────────────────────────── products ─────────────────────────────

export type ProductInput = {
  category_id?: number;
  name?: string;
  slug?: string;
  region?: string;
  note?: string | null;
  description?: string;
  guide?: string;
  status?: Status;
  order_information?: OrderField[];
};

export type NewProduct = ProductInput & { category_id: number; name: string };

/** What a product renders from: a top-up with all its services (inactive ones too), a card on its own. */
export type ProductView = { top_up: TopUpRow & { services: TopUpServiceRow[] }; card: CardRow };

/** Products made here have no image until one is uploaded: the URLs render empty. */
const NO_IMAGE: ProductImage = { image: '', image_driver: 'local', preview: '', preview_driver: 'local' };

/** A URL slug from a name: lowercase ASCII letters and digits, words joined by single dashes. */
function slugFrom(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 160)
    .replace(/^-+|-+$/g, '');
  if (slug === '') throw validationError(['The slug field is required.']);
  return slug;
}

/** A body's category must exist and hold products of this kind (422: it is an id inside the body, C2). */
async function checkCategory(tx: Tx, kind: ProductKind, categoryId: number | undefined) {
  if (categoryId === undefined) return;
  const [row] = await tx.select({ type: categories.type }).from(categories).where(eq(categories.id, categoryId)).for('key share');
  if (!row) throw validationError(['The selected category id is invalid.']);
  if (row.type !== kind) throw validationError([`The category id field must name a ${PRODUCT_KINDS[kind].words} category.`]);
}

/** Slugs are unique per product kind: a taken one is a validation failure of the field (422), raced or not. */
const slugChecked = <T>(write: Promise<T>) =>
  refusedWhenTaken(write, { top_ups_slug_uq: 'The slug has already been taken.', cards_slug_uq: 'The slug has already been taken.' });

/** The columns a product body sets (undefined: left as it is). */
const productColumns = (input: ProductInput) => ({
  categoryId: input.category_id,
  name: input.name,
  slug: input.slug,
  region: input.region,
  note: input.note,
  description: input.description,
  guide: input.guide,
  status: input.status,
});

async function productView<K extends ProductKind>(tx: Tx, kind: K, id: number): Promise<ProductView[K]> {
  if (kind === 'card') return (await found(tx.select().from(cards).where(eq(cards.id, id)), 'card', id)) as ProductView[K];
  const topUp = await found(tx.select().from(topUps).where(eq(topUps.id, id)), 'top-up', id);
  const services = await tx.select().from(topUpServices).where(eq(topUpServices.topUpId, id)).orderBy(asc(topUpServices.sortBy), asc(topUpServices.id));
  return { ...topUp, services } as ProductView[K];
}

export const createProduct = <K extends ProductKind>(deps: CatalogAdminDeps, kind: K, input: NewProduct) =>
  change(deps, async (tx) => {
    await checkCategory(tx, kind, input.category_id);
    const values = { ...productColumns(input), categoryId: input.category_id, name: input.name, slug: input.slug ?? slugFrom(input.name), image: NO_IMAGE };
    const [row] = await slugChecked(
      kind === 'top_up'
        ? tx.insert(topUps).values({ ...values, orderInformation: input.order_information }).returning({ id: topUps.id })
        : tx.insert(cards).values(values).returning({ id: cards.id }),
    );
    return productView(tx, kind, row!.id);
  });

export const updateProduct = <K extends ProductKind>(deps: CatalogAdminDeps, kind: K, id: number, input: ProductInput) =>
  change(deps, async (tx) => {
    const { product, words } = PRODUCT_KINDS[kind];
    await found(tx.select({ id: product.id }).from(product).where(eq(product.id, id)).for('no key update'), words, id);
    await checkCategory(tx, kind, input.category_id);
    const values = { ...productColumns(input), updatedAt: sql`now()` };
    await slugChecked(
      kind === 'top_up'
        ? tx.update(topUps).set({ ...values, orderInformation: input.order_information }).where(eq(topUps.id, id))
        : tx.update(cards).set(values).where(eq(cards.id, id)),
    );
    return productView(tx, kind, id);
  });

// ───────────────────────────── services ─────────────────────────────

export type ServiceInput = {
  name?: string;
  price?: string;
  discount?: string;
  discount_type?: DiscountType;
  status?: Status;
  low_stock_threshold?: number;
};

export type ServiceView = { top_up: TopUpServiceRow; card: CardServiceRow };

/**
 * C6 keeps a unit price between 0 and the price: a percentage discount is at most 100, a flat one at most the
 * price. The predicate of the failing `discount` field, or null.
 */
export function discountProblem({ price, discount, discountType }: PriceFields): string | null {
  if (discountType === 'percentage') return toCents(discount) > 100_00 ? 'must not be greater than 100 for a percentage discount.' : null;
  return toCents(discount) > toCents(price) ? 'must not be greater than the price.' : null;
}

/** A service's own pricing after `input`, checked (C6). */
function ownPricing(current: PriceFields, input: ServiceInput): PriceFields {
  const next = {
    price: fromCents(toCents(input.price ?? current.price)),
    discount: fromCents(toCents(input.discount ?? current.discount)),
    discountType: input.discount_type ?? current.discountType,
  };
  const problem = discountProblem(next);
  if (problem) throw validationError([`The discount field ${problem}`]);
  return next;
}

const serviceTable = (kind: ProductKind) => PRODUCT_KINDS[kind].service;

export const createService = <K extends ProductKind>(deps: CatalogAdminDeps, kind: K, productId: number, input: ServiceInput & { name: string; price: string }) =>
  change(deps, async (tx) => {
    const { product, words } = PRODUCT_KINDS[kind];
    await found(tx.select({ id: product.id }).from(product).where(eq(product.id, productId)), words, productId);
    const pricing = ownPricing({ price: input.price, discount: '0', discountType: 'flat' }, input);
    const values = { name: input.name, status: input.status, ...pricing };
    const [row] =
      kind === 'top_up'
        ? await tx.insert(topUpServices).values({ ...values, topUpId: productId }).returning()
        : await tx.insert(cardServices).values({ ...values, cardId: productId, lowStockThreshold: input.low_stock_threshold }).returning();
    return row as ServiceView[K];
  });

/**
 * While the service is in a campaign its price fields hold the campaign's pricing and its own pricing waits in
 * `old_data` until the campaign ends (C9): a price change then goes to `old_data`, and the campaign price stays.
 * The row lock orders this change with the campaign sync, which restores from `old_data`.
 */
export const updateService = <K extends ProductKind>(deps: CatalogAdminDeps, kind: K, id: number, input: ServiceInput) =>
  change(deps, async (tx) => {
    const table = serviceTable(kind);
    const current = await found(tx.select().from(table).where(eq(table.id, id)).for('no key update'), `${PRODUCT_KINDS[kind].words} service`, id);
    const inCampaign = current.isOffered === ACTIVE && current.oldData !== null;
    const own = inCampaign
      ? { price: current.oldData!.price, discount: current.oldData!.discount, discountType: current.oldData!.discount_type }
      : current;
    const repriced = input.price !== undefined || input.discount !== undefined || input.discount_type !== undefined;
    const pricing = repriced ? ownPricing(own, input) : null;
    const values = {
      name: input.name,
      status: input.status,
      ...(pricing === null ? {} : inCampaign ? { oldData: toSnapshot(pricing) } : pricing),
      updatedAt: sql`now()`,
    };
    const [row] =
      kind === 'top_up'
        ? await tx.update(topUpServices).set(values).where(eq(topUpServices.id, id)).returning()
        : await tx
            .update(cardServices)
            .set({ ...values, lowStockThreshold: input.low_stock_threshold })
            .where(eq(cardServices.id, id))
            .returning();
    // A new threshold is measured against the stock at once: raised above it alerts, lowered under it re-arms.
    if (kind === 'card' && input.low_stock_threshold !== undefined) await noteStockLevels(tx, [id]);
    return row as ServiceView[K];
  });

// ───────────────────────────── gateways ─────────────────────────────

export type GatewayInput = {
  code?: string;
  name?: string;
  sort_by?: number;
  image?: string;
  driver?: string;
  status?: Status;
  parameters?: Record<string, string>;
  currencies?: Record<string, Record<string, string>>;
  extra_parameters?: Record<string, string> | null;
  supported_currency?: string[];
  receivable_currencies?: Array<Record<string, string>>;
  description?: string;
  currency_type?: number;
  is_sandbox?: 0 | 1;
  environment?: string;
  is_manual?: 0 | 1 | null;
  note?: string | null;
};

const gatewayColumns = (input: GatewayInput) => ({
  code: input.code,
  name: input.name,
  sortBy: input.sort_by,
  image: input.image,
  driver: input.driver,
  status: input.status,
  parameters: input.parameters,
  currencies: input.currencies,
  extraParameters: input.extra_parameters,
  supportedCurrency: input.supported_currency,
  receivableCurrencies: input.receivable_currencies,
  description: input.description,
  currencyType: input.currency_type,
  isSandbox: input.is_sandbox,
  environment: input.environment,
  isManual: input.is_manual,
  note: input.note,
});

export const createGateway = (deps: CatalogAdminDeps, input: GatewayInput & { code: string; name: string }): Promise<GatewayRow> =>
  change(deps, async (tx) => {
    const [row] = await tx
      .insert(gateways)
      .values({ ...gatewayColumns(input), code: input.code, name: input.name })
      .returning();
    return row!;
  });

export const updateGateway = (deps: CatalogAdminDeps, id: number, input: GatewayInput): Promise<GatewayRow> =>
  change(deps, (tx) =>
    found(
      tx
        .update(gateways)
        .set({ ...gatewayColumns(input), updatedAt: sql`now()` })
        .where(eq(gateways.id, id))
        .returning(),
      'gateway',
      id,
    ),
  );

// ───────────────────────────── prices per account (C24) ─────────────────────────────

export type TierInput = { name?: string; percent_off?: string };

export async function createPriceTier(deps: CatalogAdminDeps, input: TierInput & { name: string }): Promise<Tier> {
  const { id } = await change(deps, (tx) => createTier(tx, { name: input.name, percentOff: input.percent_off }));
  return tierById(deps.db, id);
}

export async function updatePriceTier(deps: CatalogAdminDeps, id: number, input: TierInput): Promise<Tier> {
  await change(deps, (tx) => updateTier(tx, id, { name: input.name, percentOff: input.percent_off }));
  return tierById(deps.db, id);
}

export async function replaceTierPrices(
  deps: CatalogAdminDeps,
  id: number,
  prices: Array<{ kind: ProductKind; service_id: number; price: string }>,
): Promise<Tier> {
  await change(deps, (tx) => setTierPrices(tx, id, prices.map((p) => ({ kind: p.kind, serviceId: p.service_id, price: p.price }))));
  return tierById(deps.db, id);
}

/**
 * A rate change moves new orders only: an order keeps the rate it was placed at. A new symbol reaches the accounts in
 * the currency at once: every process forgets the tokens it checked, which carry an account's symbol.
 */
export async function putCurrency(deps: CatalogAdminDeps & Pick<Services, 'config' | 'tokenCache'>, code: string, input: { rate: string; symbol: string }): Promise<CurrencyRow> {
  const { symbolChanged, ...currency } = await change(deps, (tx) => setCurrency(tx, deps.config, code, input));
  if (symbolChanged) await deps.tokenCache.invalidate();
  return currency;
}
