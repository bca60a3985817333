/**
 * `createStoreClient`: the store's paths, bodies and answers typed from its OpenAPI document (openapi-fetch over the
 * generated `paths`), with the key pair's token, order retries and typed errors handled by the transport.
 */
import createClient, { type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { paths } from './openapi.js';
import { createTransport, type RetryOptions } from './transport.js';

export type StoreClientOptions = {
  /** Where the store answers, e.g. `https://store.example.com` (the paths carry `/api/` and `/license-api/`). */
  baseUrl: string;
  /** The account's key pair (Interface A): exchanged for a bearer token when first needed, and renewed. */
  publicKey?: string;
  secretKey?: string;
  /** The license api key (Interface B), sent as `X-API-Key`. */
  apiKey?: string;
  retry?: RetryOptions;
  /** Renew the token this long before it expires (default 60 s, or a tenth of its lifetime when that is shorter). */
  renewBeforeMs?: number;
  /** A fetch of your own (a proxy agent, instrumentation); the global fetch by default. */
  fetch?: typeof fetch;
};

// openapi-fetch's own rule for when the second argument may be left out.
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** The operation of a path item under one method. */
type OperationOf<PathItem, Method extends HttpMethod> = PathItem extends { [M in Method]: infer Operation extends Record<string | number, any> } ? Operation : never;

/**
 * What a call resolves to: the 2xx answer's JSON body, typed, and the response. A failure rejects with a StoreError,
 * so `data` is always there. (`parseAs: 'text'` gives the text, e.g. of the statement's `format=csv`.)
 */
export type Answer<Operation extends Record<string | number, any>, Init> = {
  data: Exclude<FetchResponse<Operation, Init, 'application/json'>['data'], undefined>;
  response: Response;
};

type Call<Method extends HttpMethod> = <Path extends PathsWithMethod<paths, Method>, Init extends MaybeOptionalInit<paths[Path], Method>>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<Answer<OperationOf<paths[Path], Method>, Init>>;

export type StoreClient = {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /** Whether the key pair is a test one (C25): its orders are test orders, paid from the test balance. */
  readonly testMode: boolean;
};

export function createStoreClient(options: StoreClientOptions): StoreClient {
  const transport = createTransport(options);
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: transport.fetch });
  // The transport throws a StoreError for every answer that is not a 2xx, so openapi-fetch only ever returns answers.
  return {
    GET: client.GET as Call<'get'>,
    POST: client.POST as Call<'post'>,
    PATCH: client.PATCH as Call<'patch'>,
    DELETE: client.DELETE as Call<'delete'>,
    testMode: transport.testMode,
  };
}

/** The utr in the answer of POST /api/top-up/make-order ("… Your order number is T0MW….", spec §4). */
export function utrOfTopUpOrder(message: string): string {
  const utr = /order number is ([0-9A-Z]+)/.exec(message)?.[1];
  if (!utr) throw new Error(`No order number in ${JSON.stringify(message)}`);
  return utr;
}
