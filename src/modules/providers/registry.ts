import type { ProviderKind } from '../../db/schema.js';
import { digiflazzAdapter, digiflazzCredentials } from './adapters/digiflazz.js';
import { httpAdapter, httpCredentials } from './adapters/http.js';
import type { AdapterFactory, CredentialFields } from './adapters/types.js';

/** Every supplier protocol the store speaks (C22): its adapter and the credentials it needs. */
export const PROVIDER_KINDS: Record<ProviderKind, { adapter: AdapterFactory; credentials: CredentialFields }> = {
  http: { adapter: httpAdapter, credentials: httpCredentials },
  digiflazz: { adapter: digiflazzAdapter, credentials: digiflazzCredentials },
};

export const PROVIDER_KIND_NAMES = Object.keys(PROVIDER_KINDS) as [ProviderKind, ...ProviderKind[]];
