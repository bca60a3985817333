/**
 * The store API (src/modules/catalog-admin/routes.ts) under arbitrary input: path segments for :id, bodies in every
 * encoding with fields mostly plausible, credentials mostly right. Invariants of test/properties/support.ts:
 * never a 5xx, always the A envelope, a refusal writes nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createCampaign, createCard, createCategory, createGateway, createTopUp, shiftDays } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { assertProbes, authHeadersArb, authorizationArb, bodyArb, nearObject, oddString, PROPERTY_TIMEOUT, Prober, rareQueryArb, queryArb, queryValues, segmentArb, type RequestSpec } from '../properties/support.js';

let app: TestApp;
let prober: Prober;
const real = { topUpCategories: [] as number[], cardCategories: [] as number[], topUps: [] as number[], topUpServices: [] as number[], cards: [] as number[], cardServices: [] as number[], gateways: [] as number[], campaigns: [] as number[] };

beforeAll(async () => {
  app = await startTestApp();
  const { db } = app.services;
  const topUpCategory = await createCategory(db, { type: 'top_up' });
  const cardCategory = await createCategory(db, { type: 'card' });
  const topUp = await createTopUp(db, { categoryId: topUpCategory.id, services: [{ price: '10.00' }, { price: '5.00' }] });
  const card = await createCard(db, { categoryId: cardCategory.id, services: [{ price: '10.00' }, { price: '2.00', discount: '1.00' }] });
  const campaign = await createCampaign(db, { start: shiftDays(0), cardServices: [{ serviceId: card.services[0]!.id, price: '8.00', maxSell: 3 }] });
  await app.services.sql`update card_services set offered_sell = 2 where id = ${card.services[0]!.id}`;
  Object.assign(real, {
    topUpCategories: [topUpCategory.id],
    cardCategories: [cardCategory.id],
    topUps: [topUp.id],
    topUpServices: topUp.services.map((s) => s.id),
    cards: [card.id],
    cardServices: card.services.map((s) => s.id),
    gateways: [(await createGateway(db)).id],
    campaigns: [campaign.id],
  });
  prober = await Prober.watching(app);
}, 60_000);

afterAll(async () => {
  if (prober) console.log(prober.summary('Store API properties'));
  await app?.close();
});

const mostly = <T>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<unknown>) => fc.oneof({ weight: 6, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: odd });
const text = mostly(fc.stringMatching(/^[A-Za-z0-9 ]{1,30}$/), oddString);
const status = mostly(fc.constantFrom(0, 1), fc.constantFrom<unknown>(2, '1', -1, true));
const money = mostly(fc.constantFrom<unknown>('1', '10.50', 5, 0.5, '999999999999.99'), fc.constantFrom<unknown>('1.005', 1e21, '-1', '1e3', ''));
const discountType = mostly(fc.constantFrom('flat', 'percentage'), fc.constantFrom('fixed', ''));
const count = mostly(fc.constantFrom<unknown>(0, 3, 2147483647), fc.constantFrom<unknown>(-1, 2147483648, 1.5, '3'));
const date = mostly(fc.constantFrom(shiftDays(-1), shiftDays(0), shiftDays(2)), fc.constantFrom<unknown>('0000-01-01', '2026-02-30', '9999-12-31', '1-1-1'));
const slug = mostly(fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}$/), oddString);
const stringMap = fc.dictionary(fc.oneof(fc.stringMatching(/^[a-z]{1,6}$/), oddString), text, { maxKeys: 3 });
const orderField = fc.record(
  {
    field_value: text,
    field_name: mostly(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.constantFrom<unknown>('topUpId', '1a', '')),
    field_placeholder: text,
    field_note: text,
    field_type: mostly(fc.constantFrom('text', 'select'), fc.constant('radio')),
    option: stringMap,
  },
  { requiredKeys: ['field_value', 'field_name', 'field_type'] },
);
const members = (ids: () => number[]) =>
  fc.array(
    fc.record({ id: mostly(fc.constantFrom(...ids()), fc.constantFrom<unknown>(0, 2147483648, 999999)), price: money, discount: money, discount_type: discountType, max_sell: count }),
    { maxLength: 3 },
  );

const product = (categories: () => number[]) => ({
  category_id: mostly(fc.constantFrom(...categories(), ...real.topUpCategories, ...real.cardCategories), fc.constantFrom<unknown>(0, 2147483648)),
  name: text,
  slug,
  region: text,
  note: fc.oneof(text, fc.constant(null)),
  description: text,
  guide: text,
  status,
});
const service = () => ({ name: text, price: money, discount: money, discount_type: discountType, status, low_stock_threshold: count });
const gateway = () => ({
  code: text,
  name: text,
  sort_by: count,
  image: text,
  driver: text,
  status,
  parameters: stringMap,
  currencies: fc.dictionary(fc.stringMatching(/^[0-9]$/), stringMap, { maxKeys: 2 }),
  extra_parameters: fc.oneof(stringMap, fc.constant(null)),
  supported_currency: fc.array(text, { maxLength: 3 }),
  receivable_currencies: fc.array(
    fc.record({ name: text, currency_symbol: text, conversion_rate: text, min_limit: text, max_limit: text, percentage_charge: text, fixed_charge: text }),
    { maxLength: 2 },
  ),
  description: text,
  currency_type: count,
  is_sandbox: status,
  environment: text,
  is_manual: fc.oneof(status, fc.constant(null)),
  note: text,
});
const campaign = () => ({
  name: text,
  start_date: date,
  end_date: date,
  status,
  top_up_services: members(() => real.topUpServices),
  card_services: members(() => real.cardServices),
});

type Route = { method: 'POST' | 'PATCH'; path: string; segment?: () => number[]; fields: () => Record<string, fc.Arbitrary<unknown>> };

const ROUTES: Route[] = [
  { method: 'POST', path: '/admin/categories', fields: () => ({ name: text, icon: text, type: mostly(fc.constantFrom('top_up', 'card'), fc.constant('game')), status }) },
  { method: 'PATCH', path: '/admin/categories/:id', segment: () => [...real.topUpCategories, ...real.cardCategories], fields: () => ({ name: text, type: fc.constantFrom('top_up', 'card'), status }) },
  { method: 'POST', path: '/admin/top-ups', fields: () => ({ ...product(() => real.topUpCategories), order_information: fc.array(orderField, { maxLength: 3 }) }) },
  { method: 'PATCH', path: '/admin/top-ups/:id', segment: () => real.topUps, fields: () => ({ ...product(() => real.topUpCategories), order_information: fc.array(orderField, { maxLength: 3 }) }) },
  { method: 'POST', path: '/admin/top-ups/:id/services', segment: () => real.topUps, fields: service },
  { method: 'PATCH', path: '/admin/top-up-services/:id', segment: () => real.topUpServices, fields: service },
  { method: 'POST', path: '/admin/cards', fields: () => product(() => real.cardCategories) },
  { method: 'PATCH', path: '/admin/cards/:id', segment: () => real.cards, fields: () => product(() => real.cardCategories) },
  { method: 'POST', path: '/admin/cards/:id/services', segment: () => real.cards, fields: service },
  { method: 'PATCH', path: '/admin/card-services/:id', segment: () => real.cardServices, fields: service },
  { method: 'POST', path: '/admin/gateways', fields: gateway },
  { method: 'PATCH', path: '/admin/gateways/:id', segment: () => real.gateways, fields: gateway },
  { method: 'POST', path: '/admin/campaigns', fields: campaign },
  { method: 'PATCH', path: '/admin/campaigns/:id', segment: () => real.campaigns, fields: campaign },
  { method: 'POST', path: '/admin/campaigns/:id/end', segment: () => real.campaigns, fields: () => ({}) },
];

const headers = () =>
  authHeadersArb(authorizationArb([`Bearer ${app.adminToken}`], [app.adminToken, `Bearer ${app.adminToken}x`]), ['Idempotency-Key', 'Accept-Language']);

describe('store API: any input keeps the A envelope, never a 5xx, never a write on failure', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path}`, async () => {
      const shape = route.fields();
      const ids = Object.values(real).flat();
      const spec = fc
        .record({
          segment: route.segment ? segmentArb(route.segment().map(String)) : fc.constant(''),
          headers: headers(),
          // Mostly JSON objects (what the admin API reads), so that validation and success are reached; any body now and then.
          body: fc.oneof(
            { weight: 3, arbitrary: fc.record({ kind: fc.constant('json' as const), value: nearObject(shape, ids), contentType: fc.constant('application/json') }) },
            { weight: 1, arbitrary: bodyArb(nearObject(shape, ids), Object.keys(shape)) },
          ),
          query: rareQueryArb(queryArb([], queryValues())),
        })
        .map(({ segment, headers, body, query }): RequestSpec => ({ method: route.method, path: route.path.replace(':id', segment), query, headers, body }));
      await assertProbes(prober, 'A', `${route.method} ${route.path.slice(6)}`, spec, 100);
    }, PROPERTY_TIMEOUT);
  }
});
