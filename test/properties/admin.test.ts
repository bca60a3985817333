/**
 * The operator API (/admin/…: every route of src/modules/admin/routes.ts and src/modules/license/admin-routes.ts,
 * not the /admin/queues dashboard) under arbitrary input: path segments for :id and :utr, query strings,
 * bodies in every encoding, and admin credentials that are mostly right (`Authorization: Bearer $ADMIN_TOKEN`)
 * and sometimes wrong. Invariants: see support.ts, with the A envelope.
 *
 * No workers run, except a consumer of the restock queue alone: a code import that succeeds waits up to 10 s
 * for its restock job, and this consumer answers it at once. It only runs inside such a successful import
 * (the import awaits it), so the write counter of every other request stays exact.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { restockCardService } from '../../src/modules/fulfilment/cards.js';
import { RestockJob } from '../../src/queues/index.js';
import { startQueueWorker, type RunningWorker } from '../../workers/worker.js';
import { createTestAccount } from '../helpers/api.js';
import { createCardService, createLicenseItem, createOrder, createTopUpService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import {
  assertAnyMethodAnyPath,
  assertKeepAlive,
  assertProbes,
  authHeadersArb,
  authorizationArb,
  bodyArb,
  headerAccess,
  nearObject,
  OPEN_LIMITS,
  oddString,
  PROTO_NAMES,
  PROPERTY_TIMEOUT,
  Prober,
  queryArb,
  queryValues,
  rareQueryArb,
  segmentArb,
  type BodySpec,
  type RequestSpec,
} from './support.js';

let app: TestApp;
let prober: Prober;
let restock: RunningWorker | undefined;

const real = {
  accounts: [] as number[],
  cardServices: [] as number[],
  utrs: [] as string[],
  items: [] as number[],
};

beforeAll(async () => {
  app = await startTestApp({ env: OPEN_LIMITS });
  const { db } = app.services;
  const buyer = await createTestAccount(app, '50.00', 'Buyer');
  const poor = await createTestAccount(app, '0.00', 'Poor');
  const card = await createCardService(db, '3.00');
  const topUp = await createTopUpService(db, '5.00');
  const orders = [
    await createOrder(db, { accountId: buyer.id, ...topUp }),
    await createOrder(db, { accountId: buyer.id, ...topUp }),
    await createOrder(db, { accountId: buyer.id, ...topUp, status: 1 }),
    await createOrder(db, { accountId: buyer.id, ...card, status: 3, codesOwed: 1, unitPrice: '3.00' }),
    await createOrder(db, { accountId: poor.id, ...card, status: 2, unitPrice: '3.00' }),
  ];
  // More orders that can still move (initiate top-ups, stock_short cards), so that complete and refund succeed now and then.
  for (let i = 0; i < 4; i++) {
    orders.push(await createOrder(db, { accountId: buyer.id, ...topUp }));
    orders.push(await createOrder(db, { accountId: poor.id, ...card, status: 3, codesOwed: 1, unitPrice: '3.00' }));
  }
  const item = await createLicenseItem(db, buyer.id, 'video');
  real.accounts = [buyer.id, poor.id];
  real.cardServices = [card.serviceId];
  real.utrs = orders.map((o) => o.utr);
  real.items = [item.id];
  restock = startQueueWorker(app.services, app.services.queues.restock, RestockJob, (job) => restockCardService(app.services.db, job.cardServiceId), 1);
  prober = await Prober.watching(app);
}, 60_000);

afterAll(async () => {
  if (prober) console.log(prober.summary('Admin API properties'));
  if (app) {
    const queue = app.services.queues.restock;
    const counts = await queue.getJobCounts('completed', 'failed', 'delayed', 'waiting', 'active');
    const failed = [...(await queue.getFailed()), ...(await queue.getDelayed())].map((j) => `${j.id}: ${j.failedReason}`);
    console.log(`restock jobs after the run: ${JSON.stringify(counts)}${failed.length ? `\n  ${failed.join('\n  ')}` : ''}`);
  }
  await restock?.close();
  await restock?.release();
  await app?.close();
});

/** Mostly the admin token (forms the guard accepts), sometimes a wrong or missing one. */
const adminAuth = () =>
  authorizationArb(
    [`Bearer ${app.adminToken}`, `bearer ${app.adminToken}`, `Bearer  ${app.adminToken} `],
    [
      app.adminToken,
      `Bearer ${app.adminToken}x`,
      `Bearer ${app.adminToken.slice(1)}`,
      `Basic ${Buffer.from(`admin:${app.adminToken}`).toString('base64')}`,
      `Bearer ${app.adminToken.toUpperCase()}`,
    ],
  );

const headers = (contentType = false) =>
  authHeadersArb(adminAuth(), ['PublicKey', 'X-API-Key', 'Idempotency-Key', 'Accept-Language', ...(contentType ? ['Content-Type'] : [])]);

/** Mostly a valid value (so that some bodies pass validation and reach the service), sometimes a near miss. */
const mostly = <T>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<unknown>, weight = 4) =>
  fc.oneof({ weight, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: odd });
/** For bodies with many fields: near misses rarer per field, so that a whole body is valid now and then. */
const rarely = <T>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<unknown>) => mostly(valid, odd, 15);

const money = (signed: boolean) =>
  mostly(
    fc.constantFrom<unknown>('1', '10.50', 5, 0.01, '999999999999.99', ' 2 ', ...(signed ? ['-1', -5] : [])),
    fc.constantFrom<unknown>('0', '0.00', '1e3', '1.005', '12.', '.5', 1.005, 1e21, -0.001, '-0', '-999999999999.99', '--1', '1,5'),
  );
const plainText = fc.stringMatching(/^[A-Za-z0-9 ]{1,30}$/);
const oddText = fc.oneof(fc.string({ maxLength: 30 }), oddString);
const text = mostly(plainText, oddText);
const rareText = rarely(plainText, oddText);
const iso = mostly(
  fc.constantFrom<unknown>('2030-01-01T00:00:00Z', '2030-01-01T00:00:00.123456+02:00', null),
  fc.constantFrom<unknown>('2030-13-01T00:00:00Z', '2030-01-01', 'yesterday', '', '+275760-09-13T00:00:00Z', '2030-01-01T00:00:00.1234567890123Z'),
);

type Route = {
  method: 'GET' | 'POST';
  /** The path with `:id`/`:utr` in place. */
  path: string;
  segment?: () => readonly string[];
  /** The body object of a POST, its fields with plausible values. */
  fields?: () => Record<string, fc.Arbitrary<unknown>>;
  /** Extra bodies beyond the generic ones (text/plain code lists). */
  bodies?: () => fc.Arbitrary<BodySpec>;
  query?: { keys: string[]; plausible?: () => fc.Arbitrary<Array<[string, string]>> };
  /** Runs of this route's property (default 150 for GETs, 120 for POSTs). */
  runs?: number;
};

const ROUTES: Route[] = [
  {
    method: 'POST',
    path: '/admin/accounts',
    fields: () => ({
      firstname: text,
      lastname: text,
      email: mostly(fc.stringMatching(/^[a-z0-9.]{1,12}@example\.(com|org)$/), fc.constantFrom('not-an-email', 'a@b', `${'a'.repeat(250)}@example.com`, 'a\u0000@b.co')),
      currency: mostly(fc.constant('USD'), fc.constantFrom('EUR', 'usd', 'US', 'USDD')),
      balance: money(false),
    }),
  },
  {
    method: 'POST',
    path: '/admin/accounts/:id/balance',
    segment: () => real.accounts.map(String),
    fields: () => ({ amount: money(true), reason: text }),
  },
  {
    method: 'POST',
    path: '/admin/card-services/:id/codes',
    segment: () => real.cardServices.map(String),
    fields: () => ({ codes: fc.array(mostly(fc.stringMatching(/^[A-Z0-9-]{4,20}$/), oddString), { minLength: 1, maxLength: 4 }) }),
    bodies: () =>
      fc.record({
        kind: fc.constant('text' as const),
        text: fc.array(fc.oneof(fc.string({ maxLength: 20 }), oddString), { maxLength: 5 }).map((lines) => lines.join('\n')),
        contentType: fc.constantFrom('text/plain', 'text/plain; charset=utf-8', 'TEXT/PLAIN'),
      }),
    // Fewer runs: a successful import waits for its restock job, now and then for the whole 10 s (see the report).
    runs: 60,
  },
  { method: 'GET', path: '/admin/card-services/:id/stock', segment: () => real.cardServices.map(String), query: { keys: ['id'] } },
  {
    method: 'GET',
    path: '/admin/orders',
    query: {
      keys: ['status', 'page', 'per_page'],
      plausible: () =>
        fc
          .record(
            {
              status: mostly(
                fc.constantFrom('initiate', 'completed', 'refund', 'stock_short', '0', '3', 'COMPLETED', ' refund '),
                fc.constantFrom('4', '-1', '1.0', 'complete', 'stock short', ...PROTO_NAMES),
                2,
              ),
              page: fc.constantFrom('1', '2'),
              per_page: fc.constantFrom('1', '10', '100', '101'),
            },
            { requiredKeys: [] },
          )
          .map((params) => Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])),
    },
  },
  { method: 'POST', path: '/admin/orders/:utr/complete', segment: () => real.utrs, fields: () => ({ note: text }) },
  { method: 'POST', path: '/admin/orders/:utr/refund', segment: () => real.utrs, fields: () => ({ reason: text }) },
  {
    method: 'POST',
    path: '/admin/license/items',
    fields: () => ({
      account_id: rarely(fc.constantFrom(...real.accounts), fc.constantFrom(0, 2147483648, '1.0')),
      name: rareText,
      description: rareText,
      category: rareText,
      sub_category: rareText,
      options: fc.array(rareText, { maxLength: 3 }),
      version: rarely(fc.constantFrom('1', '1.2.3', '1.2.3.4.5.6.7.8.9'), fc.constantFrom('1..2', 'v1', '.1', '1.')),
      demo_link: rarely(fc.constantFrom('https://example.com', 'http://localhost:3000/x?y=1'), fc.constantFrom('javascript:alert(1)', 'not a url', 'http://[::1]:99999')),
      tags: fc.array(rareText, { maxLength: 3 }),
      media_kind: rarely(fc.constantFrom('image', 'audio', 'video'), fc.constantFrom('IMAGE', 'text')),
      thumbnail: rareText,
      preview_image: rareText,
      preview_video: rareText,
      preview_audio: rareText,
      screenshots: fc.array(rareText, { maxLength: 3 }),
      price_regular: money(false),
      price_extended: money(false),
      currency: rarely(fc.constantFrom('USD', 'EUR'), fc.constantFrom('usd', 'EURO')),
      published_at: rarely(fc.constant('2030-01-01T00:00:00Z'), iso),
    }),
  },
  {
    method: 'POST',
    path: '/admin/license/purchases',
    fields: () => ({
      item_id: fc.constantFrom(...real.items),
      purchase_code: mostly(fc.stringMatching(/^[a-z0-9-]{8,40}$/), fc.oneof(oddString, fc.constantFrom('short', '12345678', ' 1234567 '))),
      license_type: text,
      price: money(false),
      supported_until: iso,
      downloaded: mostly(fc.boolean(), fc.constantFrom<unknown>('true', 1, null)),
    }),
  },
  { method: 'POST', path: '/admin/accounts/:id/api-key', segment: () => real.accounts.map(String), fields: () => ({}) },
];

describe('admin API: any input keeps the A envelope, never a 5xx, never a write on failure', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path}: any path segment, query, body and credentials`, async () => {
      const segment = route.segment ? segmentArb(route.segment()) : fc.constant('');
      const shape = route.fields?.() ?? {};
      const ids = [...real.accounts, ...real.cardServices, ...real.items];
      const generic = bodyArb(nearObject(shape, ids), Object.keys(shape));
      const body = route.bodies ? fc.oneof({ weight: 3, arbitrary: generic }, { weight: 1, arbitrary: route.bodies() }) : generic;
      const spec = fc
        .record({
          segment,
          headers: headers(route.method === 'GET'),
          body,
          query: route.query
            ? queryArb(route.query.keys, queryValues(ids, ['initiate', 'stock_short']), route.query.plausible?.())
            : rareQueryArb(queryArb([], queryValues(ids))),
        })
        .map(
          ({ segment, headers, body, query }): RequestSpec => ({
            method: route.method,
            path: route.path.replace(/:id|:utr/, segment),
            query,
            headers,
            ...(route.method === 'POST' ? { body } : {}),
          }),
        );
      await assertProbes(prober, 'A', `${route.method} ${route.path.slice(6)}`, spec, route.runs ?? (route.method === 'GET' ? 150 : 120));
    }, PROPERTY_TIMEOUT);
  }

  /** A route's path with real ids in place of `:id` and `:utr`. */
  const realPath = (r: Route) => r.path.replace(/:id/, String(real.accounts[0])).replace(/:utr/, real.utrs[0]!);

  it('any method on any /admin path (and near misses) answers in the A envelope', async () => {
    await assertAnyMethodAnyPath(prober, {
      envelope: 'A',
      label: 'any method, any /admin path',
      paths: ROUTES.map(realPath),
      suffixes: ['/', '%00', '%2F', '/x', '.json', '%ED%A0%80', '//'],
      nearMisses: ['/admin', '/admin/', '/admin/%FF', '/admin/accounts/1', '/admin/orders/1', '/admin/license'],
      access: headerAccess(headers()),
      numRuns: 80,
    });
  }, PROPERTY_TIMEOUT);

  it('after any answer, the kept-alive connection serves the next request', async () => {
    await assertKeepAlive(prober, {
      routes: ROUTES.map((r): [string, string] => [r.method, realPath(r)]),
      access: headerAccess(headers()),
      fields: { reason: text },
      numRuns: 30,
    });
  }, PROPERTY_TIMEOUT);
});
