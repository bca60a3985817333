import type { Tx } from '../db/client.js';
import type { Config } from '../env.js';

/** Demo catalog: categories, top-ups, cards with codes, a running campaign, gateways, reviews. */
export async function seedCatalog(_tx: Tx, _config: Config, _demoAccountId: number): Promise<void> {}
