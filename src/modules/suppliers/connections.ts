import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import type { ProviderKind, ProviderStatus } from '../../db/schema.js';
import type { SupplierAdapter } from './adapters/types.js';
import { PROVIDER_KINDS } from './registry.js';

/** A provider's row as the routing reads it (credentials still sealed). */
export type ProviderRow = {
  id: number;
  name: string;
  kind: ProviderKind;
  base_url: string;
  credentials_sealed: Buffer;
  timeout_ms: number;
  status: ProviderStatus;
};

/** The columns of a ProviderRow, of the providers table aliased `p`. */
export const PROVIDER_COLUMNS = sql`p.id, p.name, p.kind, p.base_url, p.credentials_sealed, p.timeout_ms, p.status`;

/** The providers matching `where` (over the alias `p`), in id order. */
export const providerRows = async (db: DbOrTx, where: SQL): Promise<ProviderRow[]> => [
  ...(await db.execute<ProviderRow>(sql`select ${PROVIDER_COLUMNS} from providers p where ${where} order by p.id`)),
];

/** Credentials are sealed with the code key (AES-256-GCM), like card codes: needed in clear to sign, never shown. */
export const sealCredentials = (codeKey: Buffer, credentials: Record<string, string>) => encrypt(codeKey, JSON.stringify(credentials));

const unsealCredentials = (codeKey: Buffer, sealed: Buffer) => JSON.parse(decrypt(codeKey, sealed)) as Record<string, string>;

/** The adapter of a provider's protocol, for one call: the credentials are unsealed here and dropped with it. */
export const connectionOf = (provider: ProviderRow, codeKey: Buffer): SupplierAdapter =>
  PROVIDER_KINDS[provider.kind].adapter({
    id: provider.id,
    baseUrl: provider.base_url,
    credentials: unsealCredentials(codeKey, provider.credentials_sealed),
  });

/** A route of a top-up service: its provider, the provider's code for the product, its cost and destination template. */
export type Route = ProviderRow & { product_code: string; cost: string | null; destination: string | null; circuit_open: boolean };

/**
 * The routes of a service in priority order; a service never given routes has the TOPUP_PROVIDER=http provider as its
 * one route (its product code the service's id), while that provider is active. Routes set to `[]` by an operator
 * leave none: its orders wait for the operator (C22).
 */
export const routesOf = (db: DbOrTx, topUpServiceId: number) =>
  db.execute<Route>(sql`
    select ${PROVIDER_COLUMNS}, r.product_code, r.cost, r.destination, coalesce(p.circuit_open_until > now(), false) as circuit_open, r.position
    from top_up_routes r join providers p on p.id = r.provider_id
    where r.top_up_service_id = ${topUpServiceId}
    union all
    select ${PROVIDER_COLUMNS}, ${String(topUpServiceId)}, null, null, coalesce(p.circuit_open_until > now(), false), 0
    from providers p
    where p.from_environment and p.status = 'active'
      -- Routes are only ever written by setRoutes, which stamps routes_set_at (migration 0017 stamped those before it).
      and not exists (select 1 from top_up_services s where s.id = ${topUpServiceId} and s.routes_set_at is not null)
    order by position`);

/** A route new orders may go to: its provider active and its circuit closed. */
export const isAvailable = (route: Route) => route.status === 'active' && !route.circuit_open;
