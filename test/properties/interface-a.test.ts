/**
 * Interface A (/api/…) under arbitrary input: the 17 endpoints of the spec and the aliases topUp/order and
 * card/order. Most requests carry a valid bearer token so validation and business rules run; the rest carry
 * broken, foreign or missing credentials. Invariants: see support.ts (no 5xx, no stack trace, the A envelope,
 * no write on failure).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { AccountCredentials } from '../../src/modules/accounts/service.js';
import { createTestAccount, tokenFor } from '../helpers/api.js';
import {
  createCampaign,
  createCard,
  createCategory,
  createGateway,
  createOrderFor,
  createReview,
  createTopUp,
} from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  assertAnyMethodAnyPath,
  assertKeepAlive,
  assertProbes,
  authHeadersArb,
  authorizationArb,
  bodyArb,
  extraHeadersArb,
  headerAccess,
  headerValueArb,
  nearObject,
  OPEN_LIMITS,
  oddString,
  PROPERTY_TIMEOUT,
  Prober,
  queryArb,
  queryValues,
  rareQueryArb,
  type BodySpec,
  type RequestSpec,
} from './support.js';

let app: TestApp;
let prober: Prober;
let keys: AccountCredentials;
let other: AccountCredentials;
let token: string;
let otherToken: string;

/** Real ids and slugs, so that generated ids hit rows too. */
const real = {
  categories: [] as number[],
  topUps: [] as number[],
  topUpServices: [] as number[],
  cards: [] as number[],
  cardServices: [] as number[],
  slugs: [] as string[],
};

beforeAll(async () => {
  app = await startTestApp({ env: OPEN_LIMITS });
  const { db } = app.services;
  const topUpCategory = await createCategory(db, { type: 'top_up' });
  const cardCategory = await createCategory(db, { type: 'card' });
  const hiddenCategory = await createCategory(db, { type: 'card', status: 0 });
  const topUp = await createTopUp(db, {
    categoryId: topUpCategory.id,
    orderFields: [
      { field_value: 'User Id', field_name: 'User_Id', field_placeholder: 'Your id', field_note: '', field_type: 'text' },
      {
        field_value: 'Zone Name',
        field_name: 'Zone_Name',
        field_placeholder: '',
        field_note: '',
        field_type: 'select',
        option: { asia: 'Asia', eu: 'Europe' },
      },
    ],
    services: [{ price: '10.00' }, { price: '5.00', discount: '10', discountType: 'percentage' }, { status: 0 }],
  });
  const plainTopUp = await createTopUp(db, { categoryId: topUpCategory.id, sortBy: 2 });
  const hiddenTopUp = await createTopUp(db, { categoryId: topUpCategory.id, status: 0 });
  const card = await createCard(db, { categoryId: cardCategory.id, services: [{ price: '2.50' }, { price: '1.00' }, { status: 0 }] });
  const hiddenCard = await createCard(db, { categoryId: hiddenCategory.id, status: 0 });
  await createGateway(db);
  await createCampaign(db, {
    topUpServices: [{ serviceId: topUp.services[1]!.id, price: '4.00', maxSell: 5 }],
    cardServices: [{ serviceId: card.services[1]!.id, price: '0.50', maxSell: 5 }],
  });

  keys = await createTestAccount(app, '100000.00', 'Prober');
  other = await createTestAccount(app, '0.00', 'Other');
  token = await tokenFor(app, keys);
  otherToken = await tokenFor(app, other);
  // Orders that allow reviews, and reviews to list.
  await createOrderFor(db, keys.id, { topUpId: topUp.id });
  await createOrderFor(db, keys.id, { cardId: card.id });
  await createReview(db, { accountId: other.id, kind: 'top_up', productId: topUp.id, rating: 4 });
  await createReview(db, { accountId: other.id, kind: 'card', productId: card.id, rating: 2 });

  real.categories = [topUpCategory.id, cardCategory.id, hiddenCategory.id];
  real.topUps = [topUp.id, plainTopUp.id, hiddenTopUp.id];
  real.topUpServices = [...topUp.services, ...plainTopUp.services, ...hiddenTopUp.services].map((s) => s.id);
  real.cards = [card.id, hiddenCard.id];
  real.cardServices = [...card.services, ...hiddenCard.services].map((s) => s.id);
  real.slugs = [topUp.slug, plainTopUp.slug, hiddenTopUp.slug, card.slug];

  prober = await Prober.watching(app);
}, 60_000);

afterAll(async () => {
  if (prober) console.log(prober.summary('Interface A properties'));
  await app?.close();
});

/** Mostly a valid token (both accepted forms, two accounts), sometimes a broken or missing one. */
const authorization = () =>
  authorizationArb(
    [`Bearer ${token}`, token, `bearer ${token}`, `Bearer   ${token}  `, `BEARER ${otherToken}`, otherToken],
    [
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Basic ${token}`,
      `Bearer Bearer ${token}`,
      `${token} ${token}`,
      `Bearer ${keys.secretKey}`,
      `Bearer ${keys.apiKey}`,
    ],
  );

/**
 * Authorization plus any of the other headers (key pair headers, X-API-Key, Idempotency-Key, Accept-Language;
 * Content-Type on GETs: on a POST the body spec sets it).
 */
const headers = (contentType = false) =>
  authHeadersArb(authorization(), ['PublicKey', 'SecretKey', 'X-API-Key', 'Idempotency-Key', 'Accept-Language', ...(contentType ? ['Content-Type'] : [])]);

type GetEndpoint = {
  path: string;
  keys: string[];
  values: () => readonly number[];
  extra?: () => readonly string[];
  /** The endpoint's own parameters with plausible values. */
  plausible?: () => fc.Arbitrary<Array<[string, string]>>;
};

const pageParams = () =>
  fc.record({ page: fc.constantFrom('1', '2', '3'), per_page: fc.constantFrom('1', '5', '100', '101') }, { requiredKeys: [] }).map(Object.entries);
const idParam = (name: string, ids: () => number[]) => () =>
  fc.tuple(fc.constantFrom(...ids()), fc.option(fc.constantFrom('1', '2'), { nil: undefined })).map(([id, page]): Array<[string, string]> =>
    page === undefined ? [[name, String(id)]] : [[name, String(id)], ['page', page]],
  );

/** The write endpoints (all POST). */
const POSTS = ['/api/generate/authorization-token', '/api/top-up/make-order', '/api/card/make-order', '/api/topup/review', '/api/card/review'];

const GETS: GetEndpoint[] = [
  { path: '/api/get-category', keys: ['page'], values: () => [] },
  {
    path: '/api/top-up/list',
    keys: ['category_id', 'page', 'per_page'],
    values: () => real.categories,
    plausible: () => fc.tuple(idParam('category_id', () => real.categories)(), pageParams()).map(([a, b]) => [...a, ...b]),
  },
  {
    path: '/api/top-up/details',
    keys: ['slug'],
    values: () => [],
    extra: () => [...real.slugs, real.slugs[0]!.toUpperCase(), ` ${real.slugs[0]}`],
    plausible: () => fc.constantFrom(...real.slugs).map((slug): Array<[string, string]> => [['slug', slug]]),
  },
  { path: '/api/topup/services', keys: ['top_up_id'], values: () => real.topUps, plausible: idParam('top_up_id', () => real.topUps) },
  { path: '/api/topup/review', keys: ['top_up_id', 'page'], values: () => real.topUps, plausible: idParam('top_up_id', () => real.topUps) },
  { path: '/api/get-card', keys: ['category_id'], values: () => real.categories, plausible: idParam('category_id', () => real.categories) },
  { path: '/api/card/details', keys: ['card_id'], values: () => real.cards, plausible: idParam('card_id', () => real.cards) },
  { path: '/api/card/services', keys: ['card_id'], values: () => real.cards, plausible: idParam('card_id', () => real.cards) },
  { path: '/api/card/review', keys: ['card_id', 'page'], values: () => real.cards, plausible: idParam('card_id', () => real.cards) },
  { path: '/api/get-topup/orders', keys: ['page', 'per_page'], values: () => [], plausible: pageParams },
  { path: '/api/topUp/order', keys: ['page', 'per_page'], values: () => [], plausible: pageParams },
  { path: '/api/get-card/orders', keys: ['page', 'per_page'], values: () => [], plausible: pageParams },
  { path: '/api/card/order', keys: ['page', 'per_page'], values: () => [], plausible: pageParams },
  { path: '/api/get-campaign', keys: [], values: () => [] },
];

describe('Interface A: any input keeps the envelope, never a 5xx, never a write on failure', () => {
  it('POST /api/generate/authorization-token: any PublicKey/SecretKey headers, any body', async () => {
    const pair = (valid: string[]) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...valid) },
        { weight: 4, arbitrary: headerValueArb },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
    const spec = fc
      .record({
        publicKey: pair([keys.publicKey, ` ${keys.publicKey} `, keys.publicKey.toUpperCase(), other.publicKey]),
        secretKey: pair([keys.secretKey, `${keys.secretKey}x`, other.secretKey, keys.secretKey.slice(1)]),
        extra: extraHeadersArb(['Authorization', 'X-API-Key', 'Accept-Language', 'Idempotency-Key']),
        body: fc.option(bodyArb(nearObject({ PublicKey: fc.constant(keys.publicKey), SecretKey: fc.constant(keys.secretKey) })), { nil: undefined }),
        query: queryArb(['PublicKey', 'SecretKey', 'publicKey'], queryValues([], [keys.publicKey, keys.secretKey])),
      })
      .map(
        ({ publicKey, secretKey, extra, body, query }): RequestSpec => ({
          method: 'POST',
          path: '/api/generate/authorization-token',
          query,
          headers: { ...extra, PublicKey: publicKey, SecretKey: secretKey },
          body,
        }),
      );
    await assertProbes(prober, 'A', 'POST generate/authorization-token', spec, 80);
  }, PROPERTY_TIMEOUT);

  for (const endpoint of GETS) {
    it(`GET ${endpoint.path}: any query string and headers`, async () => {
      const spec = fc
        .record({
          query: queryArb(endpoint.keys, queryValues(endpoint.values(), endpoint.extra?.() ?? []), endpoint.plausible?.()),
          headers: headers(true),
        })
        .map(({ query, headers }): RequestSpec => ({ method: 'GET', path: endpoint.path, query, headers }));
      await assertProbes(prober, 'A', `GET ${endpoint.path.slice(5)}`, spec, 100);
    }, PROPERTY_TIMEOUT);
  }

  /** A write endpoint: a body shaped like its own (from `fields`) in every encoding, any headers, any query. */
  const writeProperty = async (path: string, fields: () => Record<string, fc.Arbitrary<unknown>>, ids: () => number[], numRuns: number) => {
    const shape = fields();
    const spec = fc
      .record({
        body: bodyArb(nearObject(shape, ids()), Object.keys(shape)),
        headers: headers(),
        query: rareQueryArb(queryArb(Object.keys(shape), queryValues(ids()))),
      })
      .map(({ body, headers, query }): RequestSpec => ({ method: 'POST', path, query, headers, body }));
    await assertProbes(prober, 'A', `POST ${path.slice(5)}`, spec, numRuns);
  };

  const someOf = <T>(values: T[]) => fc.array(fc.constantFrom(...values), { minLength: 1, maxLength: 3 });

  it('POST /api/top-up/make-order: any form, multipart or JSON body, any Idempotency-Key', async () => {
    await writeProperty(
      '/api/top-up/make-order',
      () => ({
        topUpId: fc.constantFrom(real.topUps[0]!, ...real.topUps),
        serviceId: fc.constantFrom(real.topUpServices[0]!, real.topUpServices[1]!, ...real.topUpServices),
        User_Id: fc.oneof(fc.string(), oddString),
        Zone_Name: fc.constantFrom('asia', 'eu', 'Asia', 'ASIA', ' asia', '__proto__', 'toString'),
      }),
      () => [...real.topUps, ...real.topUpServices],
      150,
    );
  }, PROPERTY_TIMEOUT);

  it('POST /api/card/make-order: both spellings, lists or scalars of anything, any Idempotency-Key', async () => {
    const quantities = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 });
    await writeProperty(
      '/api/card/make-order',
      () => ({
        service_ids: someOf(real.cardServices),
        serviceIds: someOf(real.cardServices),
        quantities,
        quantity: quantities,
      }),
      () => real.cardServices,
      150,
    );
  }, PROPERTY_TIMEOUT);

  const rating = fc.constantFrom<unknown>(1, 2, 3, 4, 5, 4.5, '5', '1.0', ' 3 ');
  const comment = fc.oneof(fc.string(), oddString);

  it('POST /api/topup/review: any body', async () => {
    await writeProperty('/api/topup/review', () => ({ topUpId: fc.constantFrom(...real.topUps), rating, comment }), () => real.topUps, 120);
  }, PROPERTY_TIMEOUT);

  it('POST /api/card/review: any body', async () => {
    await writeProperty('/api/card/review', () => ({ card_id: fc.constantFrom(...real.cards), rating, comment }), () => real.cards, 120);
  }, PROPERTY_TIMEOUT);

  it('POST make-order with an Idempotency-Key: replays, conflicts and refusals (poor account) write nothing on failure', async () => {
    const topUpFields = {
      topUpId: fc.constant(real.topUps[0]!),
      serviceId: fc.constantFrom(real.topUpServices[0]!, real.topUpServices[1]!),
      User_Id: fc.constantFrom('player-1', 'player-2'),
      Zone_Name: fc.constantFrom('asia', 'eu'),
    };
    const cardFields = {
      service_ids: fc.constantFrom([real.cardServices[0]!], [real.cardServices[1]!], [real.cardServices[0]!, real.cardServices[1]!]),
      quantities: fc.constantFrom([1], [2], [1, 1]),
    };
    const order = fc.oneof(
      fc.record({ path: fc.constant('/api/top-up/make-order'), fields: nearObject(topUpFields, real.topUps) }),
      fc.record({ path: fc.constant('/api/card/make-order'), fields: nearObject(cardFields, real.cardServices) }),
    );
    const spec = fc
      .record({
        order,
        auth: fc.constantFrom(`Bearer ${token}`, `Bearer ${otherToken}`, otherToken),
        key: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('key-1', 'key-2', 'KEY-1') }, { weight: 1, arbitrary: headerValueArb }),
        encoding: fc.constantFrom('json', 'form', 'multipart'),
      })
      .map(({ order: { path, fields }, auth, key, encoding }): RequestSpec => {
        const body: BodySpec =
          encoding === 'json'
            ? { kind: 'json', value: fields, contentType: 'application/json' }
            : encoding === 'form'
              ? { kind: 'form', fields, style: 'brackets', contentType: 'application/x-www-form-urlencoded' }
              : { kind: 'multipart', fields, files: [] };
        return { method: 'POST', path, headers: { Authorization: auth, 'Idempotency-Key': key }, body };
      });
    await assertProbes(prober, 'A', 'POST make-order with Idempotency-Key', spec, 80);
  }, PROPERTY_TIMEOUT);

  it('any method on any /api path (and near misses) answers in the A envelope', async () => {
    await assertAnyMethodAnyPath(prober, {
      envelope: 'A',
      label: 'any method, any /api path',
      paths: [...GETS.map((e) => e.path), ...POSTS],
      suffixes: ['/', '%00', '%2F', '/..', '/x', '.json', '%ED%A0%80', '//'],
      nearMisses: ['/api', '/api/', '/api/%FF', '/api/get-category/1', '/api/webhooks', '/api/order/details'],
      access: headerAccess(headers()),
      numRuns: 80,
    });
  }, PROPERTY_TIMEOUT);

  it('after any answer, the kept-alive connection serves the next request', async () => {
    await assertKeepAlive(prober, {
      routes: [...POSTS.map((p): [string, string] => ['POST', p]), ...GETS.map((e): [string, string] => ['GET', e.path])],
      access: headerAccess(headers()),
      fields: { topUpId: fc.constantFrom(...real.topUps) },
      numRuns: 40,
    });
  }, PROPERTY_TIMEOUT);
});
