/**
 * Interface B (/license-api/…) under arbitrary input: account/details, items/all, items/item and
 * purchases/validation. Most requests carry a valid api key in one of the four places of C12 (query
 * `api_key`, body `api_key`, `X-API-Key`, `Authorization: Bearer`); the rest carry junk or nothing.
 * Invariants: see support.ts, with the B envelope `{status: 'error', msg}` for failures.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { AccountCredentials } from '../../src/modules/accounts/service.js';
import { createTestAccount } from '../helpers/api.js';
import { createLicenseItem, createLicensePurchase } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  assertAnyMethodAnyPath,
  assertKeepAlive,
  assertProbes,
  bodyArb,
  extraHeadersArb,
  headerValueArb,
  nearObject,
  OPEN_LIMITS,
  oddString,
  pct,
  PROPERTY_TIMEOUT,
  Prober,
  queryArb,
  queryValues,
  rareQueryArb,
  type BodySpec,
  type HeaderValue,
  type RequestSpec,
} from './support.js';

let app: TestApp;
let prober: Prober;
let owner: AccountCredentials;
let empty: AccountCredentials;
let itemIds: number[] = [];
let codes: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: OPEN_LIMITS });
  owner = await createTestAccount(app, '10.00', 'Owner');
  empty = await createTestAccount(app, '10.00', 'Empty');
  const foreign = await createTestAccount(app, '10.00', 'Foreign');
  const { db, config } = app.services;
  const image = await createLicenseItem(db, owner.id, 'image', ['items/s1.jpg']);
  const audio = await createLicenseItem(db, owner.id, 'audio');
  const video = await createLicenseItem(db, owner.id, 'video');
  const theirs = await createLicenseItem(db, foreign.id, 'image');
  itemIds = [image.id, audio.id, video.id, theirs.id];
  codes = [
    await createLicensePurchase(db, config.codeEncryptionKey, { item: image, supportedUntil: '2030-01-01T00:00:00Z' }),
    await createLicensePurchase(db, config.codeEncryptionKey, { item: audio, licenseType: 'Extended', downloaded: true }),
    await createLicensePurchase(db, config.codeEncryptionKey, { item: theirs }),
  ];
  prober = await Prober.watching(app);
}, 60_000);

afterAll(async () => {
  if (prober) console.log(prober.summary('Interface B properties'));
  await app?.close();
});

type Placement = 'query' | 'header' | 'bearer' | 'body' | 'none';

/** An api key: mostly a real one (owner, or an owner of nothing), sometimes junk. */
const keyArb = (): fc.Arbitrary<HeaderValue> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(owner.apiKey, owner.apiKey, empty.apiKey, ` ${owner.apiKey} `) },
    { weight: 2, arbitrary: headerValueArb },
    { weight: 1, arbitrary: fc.constantFrom(`${owner.apiKey}x`, owner.apiKey.toUpperCase(), owner.secretKey, owner.publicKey) },
  );

const LANGUAGES = fc.oneof(fc.constantFrom('es', 'es-MX,es;q=0.9', 'en', 'ES', 'es;q=0', 'fr, es', '*'), headerValueArb);

/**
 * The key placed in one of the C12 places (or nowhere), junk in another now and then, Accept-Language
 * and other headers at random. `body` placement needs a body object: the caller puts the key there.
 */
const credentials = (places: Placement[]) =>
  fc
    .record({
      where: fc.constantFrom(...places),
      key: keyArb(),
      junk: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.record({ name: fc.constantFrom('X-API-Key', 'Authorization'), value: headerValueArb }) },
      ),
      language: fc.option(LANGUAGES, { nil: undefined }),
      // The body spec sets the Content-Type of a POST; a GET may carry one too.
      extra: extraHeadersArb(['PublicKey', 'SecretKey', 'Idempotency-Key', ...(places.includes('body') ? [] : ['Content-Type'])]),
    })
    .map(({ where, key, junk, language, extra }) => {
      const headers: Record<string, HeaderValue | undefined> = { ...extra };
      if (language !== undefined) headers['Accept-Language'] = language;
      if (junk) headers[junk.name] = junk.value;
      if (where === 'header') headers['X-API-Key'] = key;
      if (where === 'bearer') headers.Authorization = typeof key === 'string' ? `Bearer ${key}` : key;
      const query: Array<[string, string]> = where === 'query' && typeof key === 'string' ? [['api_key', pct(key)]] : [];
      return { where, key, headers, query };
    });

const GETS = [
  { path: '/license-api/account/details', keys: ['api_key'] },
  { path: '/license-api/items/all', keys: ['api_key'] },
  { path: '/license-api/items/item', keys: ['api_key', 'item_id'] },
];
const VALIDATION = '/license-api/purchases/validation';

describe('Interface B: any input keeps the B envelope, never a 5xx, never a write on failure', () => {
  for (const endpoint of GETS) {
    it(`GET ${endpoint.path}: the key in any place, any query string and headers`, async () => {
      const plausible =
        endpoint.path === '/license-api/items/item'
          ? fc.constantFrom(...itemIds).map((id): Array<[string, string]> => [['item_id', String(id)]])
          : undefined;
      const spec = fc
        .record({
          auth: credentials(['query', 'header', 'bearer', 'query', 'header', 'bearer', 'none']),
          query: queryArb(endpoint.keys, queryValues(itemIds, [owner.apiKey]), plausible),
        })
        .map(({ auth, query }): RequestSpec => ({ method: 'GET', path: endpoint.path, query: [...auth.query, ...query], headers: auth.headers }));
      await assertProbes(prober, 'B', `GET ${endpoint.path.slice(13)}`, spec, 120);
    }, PROPERTY_TIMEOUT);
  }

  it(`POST ${VALIDATION}: the key in any of the four places, any body`, async () => {
    const purchaseCode = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...codes) },
      { weight: 1, arbitrary: fc.constantFrom(...codes).map((c) => c.toUpperCase()) },
      { weight: 1, arbitrary: fc.constantFrom(...codes).map((c) => ` ${c}\u0000`) },
      { weight: 1, arbitrary: oddString },
    );
    const spec = fc
      .record({
        auth: credentials(['query', 'header', 'bearer', 'body', 'body', 'none']),
        fields: nearObject({ purchase_code: purchaseCode }),
        query: rareQueryArb(queryArb(['purchase_code', 'api_key'], queryValues([], codes)), 3),
      })
      .chain(({ auth, fields, query }) => {
        const withKey = auth.where === 'body' ? { ...fields, api_key: auth.key } : fields;
        return bodyArb(fc.constant(withKey), ['purchase_code', 'api_key']).map(
          (body: BodySpec): RequestSpec => ({
            method: 'POST',
            path: VALIDATION,
            query: [...auth.query, ...query],
            headers: auth.headers,
            body,
          }),
        );
      });
    await assertProbes(prober, 'B', 'POST purchases/validation', spec, 200);
  }, PROPERTY_TIMEOUT);

  it('any method on any /license-api path (and near misses) answers in the B envelope', async () => {
    await assertAnyMethodAnyPath(prober, {
      // Paths that do not start with /license-api/ exactly belong to Interface A's envelope.
      envelope: (request) => (request.path.startsWith('/license-api') ? 'B' : 'A'),
      label: 'any method, any /license-api path',
      paths: [...GETS.map((e) => e.path), VALIDATION],
      suffixes: ['/', '%00', '%2F', '/x', '.json', '%ED%A0%80', '//'],
      nearMisses: ['/license-api', '/license-api/', '/license-api/%FF', '/license-api/items', '/license-api/purchases'],
      access: credentials(['header', 'bearer', 'query', 'none']),
      numRuns: 80,
    });
  }, PROPERTY_TIMEOUT);

  it('after any answer, the kept-alive connection serves the next request', async () => {
    await assertKeepAlive(prober, {
      routes: [...GETS.map((e): [string, string] => ['GET', e.path]), ['POST', VALIDATION]],
      access: credentials(['header', 'bearer', 'query', 'none']),
      fields: { purchase_code: fc.constantFrom(...codes) },
      numRuns: 30,
    });
  }, PROPERTY_TIMEOUT);
});
