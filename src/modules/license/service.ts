import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { accounts, licenseItems, licensePurchases, type MediaKind, type NewLicenseItem } from '../../db/schema.js';
import { validationError } from '../../core/errors.js';
import { hmacSha256, sha256 } from '../../lib/crypto.js';
import { moneyNumber } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';

export type LicenseItem = typeof licenseItems.$inferSelect;
export type LicenseAccount = typeof accounts.$inferSelect;
export type LicensePurchase = typeof licensePurchases.$inferSelect;

/** An operator's new item, as validated by the admin request schema (money as decimal strings). */
export interface ItemInput {
  account_id: number;
  name: string;
  description?: string | undefined;
  category: string;
  sub_category?: string | undefined;
  options?: string[] | undefined;
  version: string;
  demo_link?: string | undefined;
  tags?: string[] | undefined;
  media_kind: MediaKind;
  thumbnail: string;
  preview_image?: string | undefined;
  preview_video?: string | undefined;
  preview_audio?: string | undefined;
  screenshots?: string[] | undefined;
  price_regular: string;
  price_extended: string;
  currency?: string | undefined;
  published_at?: string | undefined;
}

/** An operator's new purchase; a missing purchase code is generated. */
export interface PurchaseInput {
  item_id: number;
  purchase_code?: string | undefined;
  license_type?: string | undefined;
  price?: string | undefined;
  supported_until?: string | null | undefined;
  downloaded?: boolean | undefined;
}

/** The account that owns an Interface B api key, looked up by the key's digest (keys are never stored). */
export async function accountByApiKey(db: DbOrTx, apiKey: string): Promise<LicenseAccount | null> {
  const [row] = await db.select().from(accounts).where(eq(accounts.apiKeyHash, sha256(apiKey))).limit(1);
  return row ?? null;
}

/** The owner's items, oldest first. */
export async function listItems(db: DbOrTx, ownerId: number): Promise<LicenseItem[]> {
  return db.select().from(licenseItems).where(eq(licenseItems.accountId, ownerId)).orderBy(asc(licenseItems.id));
}

/** One of the owner's items; another owner's item reads as missing. */
export async function findItem(db: DbOrTx, ownerId: number, itemId: number): Promise<LicenseItem | null> {
  const [row] = await db
    .select()
    .from(licenseItems)
    .where(and(eq(licenseItems.id, itemId), eq(licenseItems.accountId, ownerId)))
    .limit(1);
  return row ?? null;
}

/**
 * Purchase codes may be short or chosen by a person, so they are stored as a keyed digest (HMAC under
 * the installation's code key): a copy of the table alone does not let anyone test guesses.
 */
export const purchaseCodeDigest = (key: Buffer, purchaseCode: string): Buffer => hmacSha256(key, `purchase-code:${purchaseCode}`);

/**
 * A purchase of one of the owner's items by its code's digest; a code of another owner's item reads as
 * missing. A purchase stored before codes were keyed (bare SHA-256) is found too, and re-stored keyed.
 */
export async function findPurchase(
  db: DbOrTx,
  key: Buffer,
  ownerId: number,
  purchaseCode: string,
): Promise<{ purchase: LicensePurchase; item: LicenseItem } | null> {
  const keyed = purchaseCodeDigest(key, purchaseCode);
  const [row] = await db
    .select({ purchase: licensePurchases, item: licenseItems })
    .from(licensePurchases)
    .innerJoin(licenseItems, eq(licenseItems.id, licensePurchases.itemId))
    .where(and(inArray(licensePurchases.codeHash, [keyed, sha256(purchaseCode)]), eq(licenseItems.accountId, ownerId)))
    .limit(1);
  if (row && !row.purchase.codeHash.equals(keyed)) {
    await db.update(licensePurchases).set({ codeHash: keyed }).where(eq(licensePurchases.id, row.purchase.id));
  }
  return row ?? null;
}

export async function createItem(db: DbOrTx, input: NewLicenseItem): Promise<LicenseItem> {
  const [row] = await db.insert(licenseItems).values(input).returning();
  return row!;
}

export async function accountExists(db: DbOrTx, accountId: number): Promise<boolean> {
  const [row] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).limit(1);
  return Boolean(row);
}

/** Any item by id (operators act across accounts). */
export async function itemById(db: DbOrTx, itemId: number): Promise<LicenseItem | null> {
  const [row] = await db.select().from(licenseItems).where(eq(licenseItems.id, itemId)).limit(1);
  return row ?? null;
}

export type NewPurchase = {
  item: LicenseItem;
  /** Generated (8-4-4-4-12 hex groups) when absent. */
  purchaseCode?: string;
  licenseType?: string;
  /** Defaults to the item's regular price. */
  price?: string;
  /** ISO 8601; null or absent = support disabled. */
  supportedUntil?: string | null;
  downloaded?: boolean;
};

/**
 * Records a purchase and returns its code, the only time it is seen: only its digest is stored.
 * Returns null when the code is already in use.
 */
export async function createPurchase(
  db: DbOrTx,
  key: Buffer,
  input: NewPurchase,
): Promise<{ id: number; purchaseCode: string; purchase: LicensePurchase } | null> {
  const purchaseCode = input.purchaseCode ?? randomUUID();
  const rows = await db
    .insert(licensePurchases)
    .values({
      itemId: input.item.id,
      codeHash: purchaseCodeDigest(key, purchaseCode),
      licenseType: input.licenseType ?? 'Regular',
      price: input.price ?? input.item.priceRegular,
      currency: input.item.currency,
      supportedUntil: input.supportedUntil ?? null,
      downloaded: input.downloaded ?? false,
      purchasedAt: sql`now()`,
    })
    .onConflictDoNothing({ target: licensePurchases.codeHash })
    .returning();
  const purchase = rows[0];
  return purchase ? { id: purchase.id, purchaseCode, purchase } : null;
}

/** Operator task (HTTP and CLI): creates an item for an account; an unknown account is a validation failure. */
export async function issueItem(db: DbOrTx, defaultCurrency: string, input: ItemInput) {
  if (!(await accountExists(db, input.account_id))) throw validationError(['The selected account id is invalid.']);
  const item = await createItem(db, {
    accountId: input.account_id,
    name: input.name,
    description: input.description ?? '',
    category: input.category,
    subCategory: input.sub_category ?? '',
    options: input.options ?? [],
    version: input.version,
    demoLink: input.demo_link ?? '',
    tags: input.tags ?? [],
    mediaKind: input.media_kind,
    thumbnail: input.thumbnail,
    previewImage: input.preview_image ?? null,
    previewVideo: input.preview_video ?? null,
    previewAudio: input.preview_audio ?? null,
    screenshots: input.screenshots ?? [],
    priceRegular: input.price_regular,
    priceExtended: input.price_extended,
    currency: input.currency ?? defaultCurrency,
    ...(input.published_at ? { publishedAt: input.published_at } : {}),
  });
  return { id: item.id, account_id: item.accountId, name: item.name, media_kind: item.mediaKind, published_at: isoMicros(item.publishedAt) };
}

/** Operator task (HTTP and CLI): records a purchase and returns its code, shown this once. */
export async function issuePurchase(db: DbOrTx, key: Buffer, input: PurchaseInput) {
  const item = await itemById(db, input.item_id);
  if (!item) throw validationError(['The selected item id is invalid.']);
  const created = await createPurchase(db, key, {
    item,
    purchaseCode: input.purchase_code,
    licenseType: input.license_type,
    price: input.price,
    supportedUntil: input.supported_until,
    downloaded: input.downloaded,
  });
  if (!created) throw validationError(['The purchase code has already been taken.']);
  const { purchase } = created;
  return {
    id: purchase.id,
    item_id: item.id,
    purchase_code: created.purchaseCode,
    license_type: purchase.licenseType,
    price: moneyNumber(purchase.price),
    currency: purchase.currency,
    supported_until: isoMicros(purchase.supportedUntil),
    downloaded: purchase.downloaded,
  };
}
