import type { ProviderKind } from '../../db/schema.js';
import { digiflazzAdapter, digiflazzCredentials } from './adapters/digiflazz.js';
import { httpAdapter, httpCredentialProblems, httpCredentials } from './adapters/http.js';
import type { AdapterFactory, CredentialFields } from './adapters/types.js';

/**
 * Every supplier protocol the store speaks (C22): its adapter, the credentials it needs, and what else those must
 * satisfy (each problem a validation message), checked when a provider is saved.
 */
export const PROVIDER_KINDS: Record<ProviderKind, { adapter: AdapterFactory; credentials: CredentialFields; problems?: (credentials: Record<string, string>) => string[] }> = {
  http: { adapter: httpAdapter, credentials: httpCredentials, problems: httpCredentialProblems },
  digiflazz: { adapter: digiflazzAdapter, credentials: digiflazzCredentials },
};

export const PROVIDER_KIND_NAMES = Object.keys(PROVIDER_KINDS) as [ProviderKind, ...ProviderKind[]];
