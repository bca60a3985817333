import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectFailure, expectJson, type Json } from '../helpers/api.js';
import { createTopUp, createTopUpOrder, createTopUpService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

/** C22 for operators: providers, routes, one order with its attempts, the margin report (admin API). */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

/** Secrets that must never come back in an answer, nor sit in clear in PostgreSQL. */
const SECRET = 'sk-live-7f3a9c1e-never-shown';
const API_KEY = 'dfz-key-5b2e8d4a-never-shown';
const WEBHOOK_SECRET = 'dfz-hook-9c4f1a7b-never-shown';
const SECRETS = [SECRET, API_KEY, WEBHOOK_SECRET];

let unique = 0;
const named = (prefix: string) => `${prefix} ${process.pid}-${++unique}`;

const httpProvider = (extra: Json = {}) => ({ name: named('Http'), kind: 'http', base_url: 'https://supplier.example.com/api', credentials: { secret: SECRET }, ...extra });
const digiflazzProvider = (extra: Json = {}) => ({
  name: named('Digiflazz'),
  kind: 'digiflazz',
  base_url: 'https://api.digiflazz.com/v1',
  credentials: { username: 'store', api_key: API_KEY, webhook_secret: WEBHOOK_SECRET },
  ...extra,
});

/** The operator's side of the API: JSON bodies with the admin token (or `token`). */
function adminApi(token: string | null = app.adminToken) {
  const send = (method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    get: (path: string) => send('GET', path),
    post: (path: string, body: unknown) => send('POST', path, body),
    patch: (path: string, body: unknown) => send('PATCH', path, body),
    put: (path: string, body: unknown) => send('PUT', path, body),
  };
}
const admin = () => adminApi();

/** The body of a 200 answer, after checking no secret is in it. */
async function success(response: Response): Promise<any> {
  const body = await expectJson(response, 200);
  expect(body.status).toBe('success');
  const text = JSON.stringify(body);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  expect(text).not.toContain('credentials');
  return body.message;
}

async function addProvider(body: Json = httpProvider()) {
  return success(await admin().post('/admin/providers', body));
}

const counts = async () => {
  const [row] = await app.services.sql`
    select (select count(*)::int from providers) as providers, (select count(*)::int from top_up_routes) as routes,
           (select coalesce(max(updated_at)::text, '') from providers) as changed`;
  return row;
};
const routeRows = () => app.services.sql`select * from top_up_routes order by top_up_service_id, position`;

/** The request is refused with `status` and `errors`, and writes nothing (providers and routes as they were). */
async function refused(request: () => Promise<Response>, status: number, errors: string | string[]) {
  const before = { counts: await counts(), routes: await routeRows() };
  expect(await expectFailure(await request(), status)).toEqual(errors);
  expect({ counts: await counts(), routes: await routeRows() }).toEqual(before);
}

const PROVIDER_KEYS = [
  'balance',
  'balance_checked_at',
  'balance_low_threshold',
  'base_url',
  'circuit',
  'circuit_open_until',
  'created_at',
  'from_environment',
  'id',
  'kind',
  'last_error',
  'last_error_at',
  'name',
  'status',
  'timeout_ms',
  'updated_at',
];

describe('providers, routes, orders and the margin report (happy path)', () => {
  it('adds http and digiflazz providers, shown without credentials, with a closed circuit', async () => {
    const body = httpProvider({ timeout_ms: 2500, balance_low_threshold: '50.00' });
    const http = await addProvider(body);
    expect(Object.keys(http).sort()).toEqual(PROVIDER_KEYS);
    expect(http).toMatchObject({
      name: body.name,
      kind: 'http',
      base_url: 'https://supplier.example.com/api',
      timeout_ms: 2500,
      status: 'active',
      circuit: 'closed',
      circuit_open_until: null,
      last_error: null,
      balance: null,
      balance_low_threshold: '50.00',
    });
    // Loopback is allowed: provider URLs are set by operators (C22).
    const digiflazz = await addProvider(digiflazzProvider({ base_url: 'http://127.0.0.1:9/v1', status: 'disabled' }));
    expect(digiflazz).toMatchObject({ kind: 'digiflazz', base_url: 'http://127.0.0.1:9/v1', timeout_ms: 10_000, status: 'disabled', balance_low_threshold: null });

    const listed = await success(await admin().get('/admin/providers'));
    expect(listed).toEqual(expect.arrayContaining([http, digiflazz]));
    for (const provider of listed) expect(provider.circuit).toBe('closed');
  });

  it('changes the name, status, timeout and credentials (replaced whole), keeping the rest', async () => {
    const created = await addProvider();
    const name = named('Renamed');
    const changed = await success(
      await admin().patch(`/admin/providers/${created.id}`, { name, status: 'disabled', timeout_ms: 100, credentials: { secret: `${SECRET}-2` } }),
    );
    expect(changed).toEqual({ ...created, name, status: 'disabled', timeout_ms: 100, updated_at: expect.any(String) });
    // The same name in another case is this provider's own: not taken.
    expect((await success(await admin().patch(`/admin/providers/${created.id}`, { name: name.toUpperCase() }))).name).toBe(name.toUpperCase());
    const sealed = (await app.services.sql`select credentials_sealed from providers where id = ${created.id}`)[0]!.credentials_sealed as Buffer;
    expect(sealed.includes(Buffer.from(`${SECRET}-2`))).toBe(false);
    // An empty change changes nothing but the time.
    const same = await success(await admin().patch(`/admin/providers/${created.id}`, {}));
    expect({ ...same, updated_at: null }).toEqual({ ...changed, name: name.toUpperCase(), updated_at: null });
    expect((await success(await admin().get('/admin/providers'))).find((p: Json) => p.id === created.id)).toEqual(same);
  });

  it('keeps credentials sealed at rest: the secret bytes are nowhere in clear in PostgreSQL', async () => {
    const http = await addProvider();
    const digiflazz = await addProvider(digiflazzProvider());
    const rows = await app.services.sql`select id, credentials_sealed from providers where id in ${app.services.sql([http.id, digiflazz.id])}`;
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const sealed = row.credentials_sealed as Buffer;
      expect(sealed.length).toBeGreaterThan(0);
      for (const secret of SECRETS) {
        expect(sealed.includes(Buffer.from(secret))).toBe(false);
        expect(sealed.toString('latin1')).not.toContain(secret);
      }
    }
    const [clear] = await app.services.sql`
      select count(*)::int as n from providers
      where position(convert_to(${SECRET}, 'UTF8') in credentials_sealed) > 0 or position(convert_to(${API_KEY}, 'UTF8') in credentials_sealed) > 0`;
    expect(clear!.n).toBe(0);
  });

  it('replaces the routes of a top-up service in priority order and reads them back; [] leaves it to an operator', async () => {
    const { serviceId } = await createTopUpService(app.services.db);
    const first = await addProvider();
    const second = await addProvider(digiflazzProvider());
    const routes = await success(
      await admin().put(`/admin/top-up-services/${serviceId}/routes`, [
        { provider_id: second.id, product_code: 'ML-86', cost: '4.00' },
        { provider_id: first.id, product_code: 'mlbb_86' },
      ]),
    );
    expect(routes).toEqual([
      { position: 0, provider_id: second.id, provider: second.name, product_code: 'ML-86', cost: '4.00', destination: null },
      { position: 1, provider_id: first.id, provider: first.name, product_code: 'mlbb_86', cost: null, destination: null },
    ]);
    expect(await success(await admin().get(`/admin/top-up-services/${serviceId}/routes`))).toEqual(routes);

    // Replaced, not added to.
    const replaced = await success(await admin().put(`/admin/top-up-services/${serviceId}/routes`, [{ provider_id: first.id, product_code: 'X', cost: 3.5 }]));
    expect(replaced).toEqual([{ position: 0, provider_id: first.id, provider: first.name, product_code: 'X', cost: '3.50', destination: null }]);
    expect(await success(await admin().put(`/admin/top-up-services/${serviceId}/routes`, []))).toEqual([]);
    expect(await success(await admin().get(`/admin/top-up-services/${serviceId}/routes`))).toEqual([]);
  });

  it('shows an order of any account, with its lines and (none yet) attempts', async () => {
    const account = await createTestAccount(app, '0.00');
    const order = await createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '6.00', informations: { 'Player id': '777' } });
    const shown = await success(await admin().get(`/admin/orders/${order.utr}`));
    expect(shown).toMatchObject({
      utr: order.utr,
      account_id: account.id,
      kind: 'top_up',
      status: 0,
      total: '6.00',
      currency: 'USD',
      informations: { 'Player id': '777' },
      fields: null,
      delivery: 'routing',
      awaiting_operator_since: null,
      completed_at: null,
      lines: [{ top_up_service_id: order.serviceId, card_service_id: null, quantity: 1, unit_price: '6.00', line_total: '6.00' }],
      attempts: [],
    });
    expect(shown).not.toHaveProperty('id');
  });

  it('reports margins: nothing delivered in a range is zero everywhere', async () => {
    const report = await success(await admin().get('/admin/reports/margin?from=2020-01-01&to=2020-02-01'));
    expect(report).toEqual({
      from: '2020-01-01',
      to: '2020-02-01',
      currency: 'USD',
      providers: [],
      services: [],
      total: { orders: 0, sales: '0.00', cost: '0.00', margin: '0.00' },
    });
    const timed = await success(await admin().get(`/admin/reports/margin?from=${encodeURIComponent('2020-01-01T00:00:00Z')}&to=${encodeURIComponent('2020-01-01T12:00:00+02:00')}`));
    expect(timed.total).toEqual({ orders: 0, sales: '0.00', cost: '0.00', margin: '0.00' });
  });
});

describe('validation and errors (nothing written)', () => {
  it('a provider: name, kind, base_url, timeout_ms, status', async () => {
    await refused(() => admin().post('/admin/providers', {}), 422, [
      'The name field is required.',
      'The kind field is required.',
      'The base url field is required.',
      'The credentials field is required.',
    ]);
    await refused(() => admin().post('/admin/providers', httpProvider({ name: '   ' })), 422, ['The name field is required.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ kind: 'soap' })), 422, ['The kind field must be one of: http, digiflazz.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ base_url: 'ftp://supplier.example.com' })), 422, ['The base url field must be an http or https URL.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ base_url: 'supplier.example.com' })), 422, ['The base url field must be an http or https URL.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ timeout_ms: 99 })), 422, ['The timeout ms field must be at least 100.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ timeout_ms: 120_001 })), 422, ['The timeout ms field must not be greater than 120000.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ timeout_ms: 1500.5 })), 422, ['The timeout ms field must be a whole number.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ status: 'paused', balance_low_threshold: '1.005' })), 422, [
      'The status field must be active or disabled.',
      'The balance low threshold field must be a number with at most 2 decimals.',
    ]);
  });

  it('base_url: no user name or password (they would be shown and logged), no query, no fragment', async () => {
    await refused(() => admin().post('/admin/providers', httpProvider({ base_url: 'https://store:hunter2@supplier.example.com/api' })), 422, [
      'The base url field must not hold a user name or password (put credentials in credentials).',
    ]);
    await refused(() => admin().post('/admin/providers', httpProvider({ base_url: 'https://supplier.example.com/api?key=1' })), 422, ['The base url field must not hold a query.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ base_url: 'https://supplier.example.com/api#v2' })), 422, ['The base url field must not hold a fragment.']);
    const provider = await addProvider();
    await refused(() => admin().patch(`/admin/providers/${provider.id}`, { base_url: 'https://user@supplier.example.com' }), 422, [
      'The base url field must not hold a user name or password (put credentials in credentials).',
    ]);
  });

  it('credentials: each field the kind needs, and nothing else', async () => {
    // An http secret that could not sign: every order would be refused unsent.
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: { secret: 'short-secret' } })), 422, [
      'The credentials.secret field must be at least 16 characters.',
    ]);
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: {} })), 422, ['The credentials.secret field is required for http providers.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: { secret: SECRET, secrte: 'typo' } })), 422, [
      'The credentials.secrte field is not used by http providers (they take secret).',
    ]);
    await refused(() => admin().post('/admin/providers', digiflazzProvider({ credentials: { username: 'store', api_key: API_KEY, token: 'x' } })), 422, [
      'The credentials.webhook_secret field is required for digiflazz providers.',
      'The credentials.token field is not used by digiflazz providers (they take username, api_key, webhook_secret).',
    ]);
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: SECRET })), 422, ['The credentials field must be an object of strings.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: { secret: 42 } })), 422, ['The credentials field must be a string.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ credentials: { secret: '  ' } })), 422, ['The credentials field is required.']);

    // On a change, against the provider's own kind.
    const provider = await addProvider(digiflazzProvider());
    await refused(() => admin().patch(`/admin/providers/${provider.id}`, { credentials: { secret: SECRET } }), 422, [
      'The credentials.username field is required for digiflazz providers.',
      'The credentials.api_key field is required for digiflazz providers.',
      'The credentials.webhook_secret field is required for digiflazz providers.',
      'The credentials.secret field is not used by digiflazz providers (they take username, api_key, webhook_secret).',
    ]);
  });

  it('a name already taken, whatever its case, on create and on change', async () => {
    const taken = await addProvider();
    const other = await addProvider();
    await refused(() => admin().post('/admin/providers', httpProvider({ name: taken.name.toUpperCase() })), 422, ['The name has already been taken.']);
    await refused(() => admin().post('/admin/providers', httpProvider({ name: ` ${taken.name.toLowerCase()} ` })), 422, ['The name has already been taken.']);
    await refused(() => admin().patch(`/admin/providers/${other.id}`, { name: taken.name.toLowerCase() }), 422, ['The name has already been taken.']);
  });

  it('of three creates of one name at once, in any case, one is taken and the others refused (422, never a 500)', async () => {
    for (let round = 0; round < 5; round++) {
      const name = named('Race');
      const answers = await Promise.all([name, name.toUpperCase(), name.toLowerCase()].map((n) => admin().post('/admin/providers', httpProvider({ name: n }))));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 422, 422]);
      const [row] = await app.services.sql`select count(*)::int as n from providers where lower(name) = lower(${name})`;
      expect(row!.n).toBe(1);
    }
  });

  it('a change: an unknown provider (404), fields as on create, the kind never changes', async () => {
    const provider = await addProvider();
    await refused(() => admin().patch('/admin/providers/999999', { name: named('Ghost') }), 404, 'No provider with id 999999.');
    await refused(() => admin().patch('/admin/providers/abc', { name: named('Ghost') }), 404, 'No provider with id "abc".');
    await refused(() => admin().patch(`/admin/providers/${provider.id}`, { name: '', base_url: 'mailto:ops@example.com', timeout_ms: 50 }), 422, [
      'The name field is required.',
      'The base url field must be an http or https URL.',
      'The timeout ms field must be at least 100.',
    ]);
    // The protocol is not a field of a change: a kind sent is ignored.
    expect((await success(await admin().patch(`/admin/providers/${provider.id}`, { kind: 'digiflazz' }))).kind).toBe('http');
  });

  it('routes: a list, of known providers, each once, for a known top-up service', async () => {
    const { serviceId } = await createTopUpService(app.services.db);
    const provider = await addProvider();
    const put = (body: unknown, id = serviceId) => () => admin().put(`/admin/top-up-services/${id}/routes`, body);
    // Routes in place, so a refusal that wiped them would show.
    await success(await put([{ provider_id: provider.id, product_code: 'KEEP' }])());

    await refused(put({ provider_id: provider.id, product_code: 'X' }), 400, 'The request body is not a valid JSON list.');
    await refused(put('X'), 400, 'The request body is not a valid JSON list.');
    await refused(put([{ provider_id: provider.id, product_code: 'A' }, { provider_id: 999_999, product_code: 'B' }]), 422, ['The routes.1.provider id is invalid.']);
    await refused(put([{ provider_id: provider.id, product_code: 'A' }, { provider_id: provider.id, product_code: 'B' }]), 422, ['The routes.1.provider id field has a duplicate value.']);
    await refused(put([{ provider_id: provider.id }]), 422, ['The routes.0.product code field is required.']);
    await refused(put([{ provider_id: provider.id, product_code: 'A', cost: '1.005' }]), 422, ['The routes.0.cost field must be a number with at most 2 decimals.']);
    await refused(put(Array.from({ length: 11 }, (_, i) => ({ provider_id: i + 1, product_code: 'A' }))), 422, ['The routes field must not have more than 10 items.']);
    await refused(() => admin().get('/admin/top-up-services/999999/routes'), 404, 'No top-up service with id 999999.');
    await refused(put([{ provider_id: provider.id, product_code: 'A' }], 999_999), 404, 'No top-up service with id 999999.');
    await refused(put([{ provider_id: provider.id, product_code: 'A' }], 'abc' as never), 404, 'No top-up service with id "abc".');
    expect(await success(await admin().get(`/admin/top-up-services/${serviceId}/routes`))).toEqual([
      { position: 0, provider_id: provider.id, provider: provider.name, product_code: 'KEEP', cost: null, destination: null },
    ]);
  });

  it("a route's destination: {field_name} placeholders, each a field of the service's order form", async () => {
    const topUp = await createTopUp(app.services.db, {
      orderFields: [
        { field_value: 'User ID', field_name: 'user_id', field_placeholder: '', field_note: '', field_type: 'text' },
        { field_value: 'Zone ID', field_name: 'zone_id', field_placeholder: '', field_note: '', field_type: 'text' },
      ],
      services: [{ price: '5.00' }],
    });
    const serviceId = topUp.services[0]!.id;
    const provider = await addProvider();
    const put = (destination: unknown) => () => admin().put(`/admin/top-up-services/${serviceId}/routes`, [{ provider_id: provider.id, product_code: 'ML', destination }]);
    const template = 'must be text with {field_name} placeholders, e.g. {user_id}{zone_id}.';
    await refused(put('user_id'), 422, [`The routes.0.destination field ${template}`]);
    await refused(put('{user_id'), 422, [`The routes.0.destination field ${template}`]);
    await refused(put('{user id}'), 422, [`The routes.0.destination field ${template}`]);
    await refused(put('{user_id}{server}{zone}'), 422, [
      'The routes.0.destination field names server, which is not a field of the order form.',
      'The routes.0.destination field names zone, which is not a field of the order form.',
    ]);
    const saved = await success(await put('{user_id}-{zone_id}')());
    expect(saved).toEqual([{ position: 0, provider_id: provider.id, provider: provider.name, product_code: 'ML', cost: null, destination: '{user_id}-{zone_id}' }]);
  });

  it('an order that does not exist (404)', async () => {
    await refused(() => admin().get('/admin/orders/T0000NOSUCHORDER'), 404, 'No order with the utr "T0000NOSUCHORDER".');
  });

  it('the margin report: two dates, the second after the first', async () => {
    await refused(() => admin().get('/admin/reports/margin?from=2020-02-01&to=2020-01-01'), 422, ['The to field must be after from.']);
    await refused(() => admin().get('/admin/reports/margin?from=2020-01-01&to=2020-01-01'), 422, ['The to field must be after from.']);
    const notADate = (field: string) => `The ${field} field must be a date (YYYY-MM-DD) or an ISO 8601 date and time with its offset.`;
    await refused(() => admin().get('/admin/reports/margin?from=2020-01-01&to=soon'), 422, [notADate('to')]);
    await refused(() => admin().get('/admin/reports/margin?from=yesterday&to=2020-01-01'), 422, [notADate('from')]);
    // Dates JavaScript would take and PostgreSQL would not: refused here, never a 500.
    await refused(() => admin().get('/admin/reports/margin?from=1&to=2'), 422, [notADate('from'), notADate('to')]);
    await refused(() => admin().get('/admin/reports/margin?from=2021-02-28&to=2021-02-30'), 422, [notADate('to')]);
    await refused(() => admin().get('/admin/reports/margin?from=March%207,%202020&to=2021-01-01'), 422, [notADate('from')]);
    await refused(() => admin().get('/admin/reports/margin'), 422, ['The from field is required.', 'The to field is required.']);
  });
});

describe('security', () => {
  /** Every new admin route, with a body it would accept. */
  const routes = async (): Promise<Array<[method: 'get' | 'post' | 'patch' | 'put', path: string, body?: unknown]>> => {
    const provider = await addProvider();
    const { serviceId } = await createTopUpService(app.services.db);
    const account = await createTestAccount(app, '0.00');
    const order = await createTopUpOrder(app.services.db, { accountId: account.id });
    return [
      ['post', '/admin/providers', httpProvider({ name: 'Sneaky' })],
      ['patch', `/admin/providers/${provider.id}`, { name: 'Sneaky', credentials: { secret: 'sneaky' } }],
      ['get', '/admin/providers'],
      ['put', `/admin/top-up-services/${serviceId}/routes`, [{ provider_id: provider.id, product_code: 'SNEAKY' }]],
      ['get', `/admin/top-up-services/${serviceId}/routes`],
      ['get', `/admin/orders/${order.utr}`],
      ['post', `/admin/orders/${order.utr}/attempts/1/settle`, { outcome: 'refused', reason: 'sneaky' }],
      ['get', '/admin/reports/margin?from=2020-01-01&to=2020-02-01'],
    ];
  };

  it('every admin route answers 401 without the admin token or with a wrong one, and changes nothing', async () => {
    const list = await routes();
    const before = { providers: await app.services.sql`select * from providers order by id`, routes: await routeRows() };
    const account = await createTestAccount(app, '0.00');
    const clientToken = (await expectJson(await app.request('/api/generate/authorization-token', { method: 'POST', headers: { PublicKey: account.publicKey, SecretKey: account.secretKey } }), 200))
      .bearer_token as string;
    for (const caller of [adminApi(null), adminApi(''), adminApi(`${app.adminToken}x`), adminApi(clientToken)]) {
      for (const [method, path, body] of list) {
        const response = method === 'get' ? await caller.get(path) : await caller[method](path, body);
        expect(await expectFailure(response, 401), `${method} ${path}`).toBe('Invalid admin token.');
      }
    }
    expect({ providers: await app.services.sql`select * from providers order by id`, routes: await routeRows() }).toEqual(before);
  });

  it('a provider callback without a valid signature answers 401 and settles nothing', async () => {
    const provider = await addProvider();
    const account = await createTestAccount(app, '0.00');
    const order = await createTopUpOrder(app.services.db, { accountId: account.id });
    await app.services.sql`
      insert into provider_attempts (order_id, provider_id, product_code, outcome) values (${order.id}, ${provider.id}, 'X', 'pending')`;
    const state = async () => ({
      order: await app.services.sql`select status, refunded_amount, updated_at from orders where id = ${order.id}`,
      attempts: await app.services.sql`select * from provider_attempts where order_id = ${order.id}`,
      provider: await app.services.sql`select * from providers where id = ${provider.id}`,
    });
    const before = await state();
    const body = JSON.stringify({ reference: order.utr, status: 'completed', provider_reference: 'P-1' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const callback = (headers: Record<string, string>, text = body) =>
      app.request(`/callbacks/providers/${provider.id}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: text });
    const unsigned = await callback({});
    expect(await expectFailure(unsigned, 401)).toBe('The signature is missing, stale or not valid.');
    const wrong = await callback({ 'X-Signature': `sha256=${'0'.repeat(64)}`, 'X-Timestamp': timestamp });
    expect(await expectFailure(wrong, 401)).toBe('The signature is missing, stale or not valid.');
    // Signed with the admin token is no better: only the provider's own secret signs.
    const { createHmac } = await import('node:crypto');
    const byAdmin = await callback({ 'X-Signature': `sha256=${createHmac('sha256', app.adminToken).update(`${timestamp}.${body}`).digest('hex')}`, 'X-Timestamp': timestamp, Authorization: `Bearer ${app.adminToken}` });
    expect(await expectFailure(byAdmin, 401)).toBe('The signature is missing, stale or not valid.');
    // Signed over the body alone (without the time), as an earlier version of the protocol had it.
    const bodyOnly = await callback({ 'X-Signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`, 'X-Timestamp': timestamp });
    expect(await expectFailure(bodyOnly, 401)).toBe('The signature is missing, stale or not valid.');
    expect(await state()).toEqual(before);
  });

  it('a callback for a provider id that does not exist is refused exactly as a bad signature is: ids cannot be told apart', async () => {
    const provider = await addProvider();
    const body = JSON.stringify({ reference: 'T0000', status: 'completed' });
    const post = (id: number | string) =>
      app.request(`/callbacks/providers/${id}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': `sha256=${'0'.repeat(64)}`, 'X-Timestamp': String(Math.floor(Date.now() / 1000)) }, body });
    const refusal = await expectFailure(await post(provider.id), 401);
    // Unknown, and ids no provider can have: past the largest id, 0, not a number.
    for (const id of [999_999, 2_147_483_648, 0, 'x', '%20']) expect(await expectFailure(await post(id), 401), String(id)).toBe(refusal);
  });

  it('refused callbacks are limited per client address: past AUTH_FAILURES_PER_IP, 429 before any signature is checked', async () => {
    const limited = await startTestApp({ env: { AUTH_FAILURES_PER_IP: '3', AUTH_FAILURE_WINDOW_SECONDS: '60' } });
    try {
      const post = () => limited.request('/callbacks/providers/1', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      for (let i = 0; i < 3; i++) await expectFailure(await post(), 401);
      const blocked = await post();
      expect(await expectFailure(blocked, 429)).toBe('Too many attempts. Please try again later.');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
