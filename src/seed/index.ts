import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accountKeys, accounts } from '../db/schema.js';
import type { Config } from '../core/env.js';
import { hmacSha256, sha256 } from '../lib/crypto.js';
import { createAccount } from '../modules/accounts/service.js';
import { syncCampaigns } from '../modules/campaigns/service.js';
import { seedCatalog } from './catalog.js';
import { seedLicenseItems } from './license.js';

export const DEMO_USERNAME = 'demo';

export type DemoCredentials = { publicKey: string; secretKey: string; apiKey: string; purchaseCode: string };

/**
 * The demo secrets are derived from the installation's code-encryption key, so every run of
 * `npm run seed -- --json` prints the same working credentials while the database keeps only digests.
 */
export function demoCredentials(config: Config): DemoCredentials {
  const derive = (label: string) => hmacSha256(config.codeEncryptionKey, `demo:${label}`).toString('hex');
  return {
    publicKey: `pk_demo_${derive('public').slice(0, 24)}`,
    secretKey: `sk_demo_${derive('secret').slice(0, 40)}`,
    apiKey: `ak_demo_${derive('api').slice(0, 40)}`,
    purchaseCode: formatPurchaseCode(derive('purchase')),
  };
}

/** Purchase codes look like 8-4-4-4-12 hex groups. */
function formatPurchaseCode(hex: string): string {
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join('-');
}

export async function isDatabaseEmpty(db: Db): Promise<boolean> {
  const [row] = await db.execute<{ empty: boolean }>(sql`select not exists (select 1 from accounts) as empty`);
  return row?.empty ?? true;
}

/**
 * Creates the demo account and catalog (C14). Idempotent: a second run changes nothing but
 * re-asserts the demo account's credential digests, so the printed credentials always work.
 */
export async function seedDemoData(db: Db, config: Config): Promise<DemoCredentials> {
  const credentials = demoCredentials(config);
  await db.transaction(async (tx) => {
    // One seeder at a time (npm start in two processes on an empty database).
    await tx.execute(sql`select pg_advisory_xact_lock(7301002)`);
    const [existing] = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.username, DEMO_USERNAME));
    if (existing) {
      await tx
        .update(accounts)
        .set({
          publicKey: credentials.publicKey,
          secretKeyHash: sha256(credentials.secretKey),
          apiKeyHash: sha256(credentials.apiKey),
        })
        .where(eq(accounts.id, existing.id));
      await tx
        .insert(accountKeys)
        .values({ accountId: existing.id, publicKey: credentials.publicKey, secretKeyHash: sha256(credentials.secretKey), mode: 'live', scope: 'full' })
        .onConflictDoUpdate({ target: accountKeys.publicKey, set: { secretKeyHash: sha256(credentials.secretKey), revokedAt: null } });
      return;
    }
    const { id } = await createAccount(
      tx,
      {
        firstname: 'Demo',
        lastname: 'Reseller',
        username: DEMO_USERNAME,
        email: 'demo@example.com',
        currency: config.STORE_CURRENCY,
        currencySymbol: config.STORE_CURRENCY_SYMBOL,
        balance: '100000.00',
      },
      credentials,
    );
    await seedCatalog(tx, config);
    await seedLicenseItems(tx, config, id, credentials.purchaseCode);
    // The demo campaign's services take their campaign pricing right away.
    await syncCampaigns(tx);
  });
  return credentials;
}
