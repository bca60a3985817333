import type { Tx } from '../db/client.js';
import type { Config } from '../env.js';

/** Demo license items of each media kind, and a purchase for `purchaseCode`. */
export async function seedLicenseItems(_tx: Tx, _config: Config, _ownerId: number, _purchaseCode: string): Promise<void> {}
