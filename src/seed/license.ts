import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { accounts } from '../db/schema.js';
import type { Config } from '../core/env.js';
import { createItem, createPurchase } from '../modules/license/service.js';
import { DEMO_ITEMS, DEMO_PROFILE } from '../demo/license.js';

/**
 * Demo license items of each media kind (C14), the demo account's public profile, and purchases:
 * `purchaseCode` buys the image item with six months of support; a second purchase (of the audio
 * item, code not printed) has support disabled.
 */
export async function seedLicenseItems(tx: Tx, config: Config, ownerId: number, purchaseCode: string): Promise<void> {
  await tx.update(accounts).set(DEMO_PROFILE).where(eq(accounts.id, ownerId));

  const items = [];
  // One at a time, so ids follow the list order on every installation.
  for (const item of DEMO_ITEMS) items.push(await createItem(tx, { ...item, accountId: ownerId, currency: config.STORE_CURRENCY }));
  const [image, audio] = items;

  const sixMonths = new Date(Date.now() + 183 * 24 * 3600 * 1000).toISOString();
  await createPurchase(tx, config.codeEncryptionKey, { item: image!, purchaseCode, supportedUntil: sixMonths, downloaded: true });
  await createPurchase(tx, config.codeEncryptionKey, { item: audio!, supportedUntil: null });
}
