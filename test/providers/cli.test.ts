import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, expectJson } from '../helpers/api.js';
import { cliEnvOf, cliJson, runCli, type CliRun } from '../helpers/cli.js';
import { createTopUpOrder, createTopUpService } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

/** C22 from a shell: the provider commands, each in a process of its own, on the test app's database. */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const cli = (args: string[], stdin?: string) => runCli(args, cliEnvOf(app), stdin);

const SECRET = 'sk-cli-4e1d7a2b-never-shown';
const API_KEY = 'dfz-cli-8a3c5f9e-never-shown';

let unique = 0;
const named = (prefix: string) => `${prefix} ${process.pid}-${++unique}`;

/** The JSON a command printed, after checking it succeeded and printed no secret. */
function printed(run: CliRun): any {
  for (const secret of [SECRET, API_KEY]) expect(run.stdout + run.stderr).not.toContain(secret);
  expect(run.stdout).not.toContain('credentials');
  return cliJson(run);
}

/** A failure: exit 1, nothing on stdout, the API's messages on stderr (one per line). */
function failed(run: CliRun, message: string) {
  expect(run.code, run.stdout).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd()).toBe(message);
}

const providerCount = async () => (await app.services.sql`select count(*)::int as n from providers`)[0]!.n as number;

describe('provider commands', { timeout: 120_000 }, () => {
  it('providers:add adds http and digiflazz providers (credentials inline, from a file or stdin), printed without them', async () => {
    const name = named('Http');
    const http = printed(
      await cli([
        'providers:add',
        '--name',
        name,
        '--kind',
        'http',
        '--base-url',
        'http://127.0.0.1:9/api',
        '--credentials',
        JSON.stringify({ secret: SECRET }),
        '--timeout-ms',
        '2500',
        '--balance-low-threshold',
        '25.50',
      ]),
    );
    expect(http).toMatchObject({ name, kind: 'http', base_url: 'http://127.0.0.1:9/api', timeout_ms: 2500, status: 'active', circuit: 'closed', balance_low_threshold: '25.50' });
    // What the admin API shows of it, the same.
    const listed = await expectJson(await app.request('/admin/providers', { headers: { Authorization: `Bearer ${app.adminToken}` } }), 200);
    expect(listed.message).toContainEqual(http);

    const file = join(await mkdtemp(join(tmpdir(), 'providers-')), 'credentials.json');
    await writeFile(file, JSON.stringify({ username: 'store', api_key: API_KEY, webhook_secret: 'hook' }));
    const digiflazz = printed(
      await cli(['providers:add', '--name', named('Digiflazz'), '--kind', 'digiflazz', '--base-url', 'https://api.digiflazz.com/v1', '--credentials-file', file, '--status', 'disabled']),
    );
    expect(digiflazz).toMatchObject({ kind: 'digiflazz', status: 'disabled', timeout_ms: 10_000 });

    const piped = printed(
      await cli(['providers:add', '--name', named('Piped'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials-file', '-'], JSON.stringify({ secret: SECRET })),
    );
    expect(piped.kind).toBe('http');

    // Sealed at rest.
    const rows = await app.services.sql`select credentials_sealed from providers where id in ${app.services.sql([http.id, digiflazz.id, piped.id])}`;
    for (const row of rows) for (const secret of [SECRET, API_KEY]) expect((row.credentials_sealed as Buffer).includes(Buffer.from(secret))).toBe(false);
  });

  it('providers:add refuses what the API refuses, with its messages, and writes nothing', async () => {
    const before = await providerCount();
    const add = (...extra: string[]) => cli(['providers:add', '--name', named('Bad'), '--kind', 'http', '--base-url', 'https://s.example.com', ...extra]);
    failed(await add('--credentials', JSON.stringify({ secret: SECRET, secrte: 'x' })), 'The credentials.secrte field is not used by http providers (they take secret).');
    failed(await add('--credentials', JSON.stringify({ secret: SECRET }), '--timeout-ms', '99'), 'The timeout ms field must be at least 100.');
    failed(await add('--credentials', JSON.stringify({ secret: SECRET }), '--timeout-ms', 'soon'), 'The timeout ms field must be a whole number.');
    failed(await add('--credentials', '{"secret":'), 'The credentials field must be an object of strings.');
    failed(await add(), 'The credentials field is required.');
    failed(
      await cli(['providers:add', '--name', ' ', '--kind', 'soap', '--base-url', 'ftp://s.example.com', '--credentials', '{}']),
      'The name field is required.\nThe kind field must be one of: http, digiflazz.\nThe base url field must be an http or https URL.',
    );
    expect(await providerCount()).toBe(before);
    // A required option missing is a usage error, answered before connecting.
    const usage = await cli(['providers:add', '--name', 'X', '--kind', 'http']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("required option '--base-url <url>' not specified");
  });

  it('providers:update changes the options given; an unknown provider is not found', async () => {
    const created = printed(await cli(['providers:add', '--name', named('Change'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    const name = named('Changed');
    const changed = printed(await cli(['providers:update', String(created.id), '--name', name, '--status', 'disabled', '--timeout-ms', '30000', '--credentials', JSON.stringify({ secret: `${SECRET}-2` })]));
    expect(changed).toEqual({ ...created, name, status: 'disabled', timeout_ms: 30_000, updated_at: expect.any(String) });

    failed(await cli(['providers:update', String(created.id), '--base-url', 'nope']), 'The base url field must be an http or https URL.');
    const other = printed(await cli(['providers:add', '--name', named('Other'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    failed(await cli(['providers:update', String(other.id), '--name', name.toLowerCase()]), 'The name has already been taken.');
    failed(await cli(['providers:update', '999999', '--status', 'active']), 'No provider with id 999999.');
    // The protocol never changes: not an option of a change.
    expect((await cli(['providers:update', String(created.id), '--kind', 'digiflazz'])).code).toBe(2);
    expect(printed(await cli(['providers:list'])).find((p: { id: number }) => p.id === created.id)).toEqual(changed);
  });

  it('providers:update --clear-balance-low-threshold removes the threshold; given with one, it is refused', async () => {
    const created = printed(
      await cli(['providers:add', '--name', named('Watched'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET }), '--balance-low-threshold', '20.00']),
    );
    expect(created.balance_low_threshold).toBe('20.00');
    failed(
      await cli(['providers:update', String(created.id), '--clear-balance-low-threshold', '--balance-low-threshold', '5.00']),
      'Give either --balance-low-threshold <amount> or --clear-balance-low-threshold, not both.',
    );
    expect(printed(await cli(['providers:update', String(created.id), '--clear-balance-low-threshold'])).balance_low_threshold).toBeNull();
  });

  it('orders:settle settles an open attempt as the admin API does; what it refuses, it refuses with its messages', async () => {
    const provider = printed(await cli(['providers:add', '--name', named('Settled'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    const account = await createTestAccount(app, '0.00');
    const open = async () => {
      const order = await createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '7.00' });
      const [attempt] = await app.services.sql<{ id: number }[]>`
        insert into provider_attempts (order_id, provider_id, product_code, outcome, base_url) values (${order.id}, ${provider.id}, 'X', 'pending', 'https://s.example.com')
        returning id::float8 as id`;
      return { order, attemptId: attempt!.id };
    };
    const delivered = await open();
    expect(printed(await cli(['orders:settle', delivered.order.utr, String(delivered.attemptId), '--outcome', 'completed', '--reason', 'delivered, per the supplier by phone']))).toEqual({
      utr: delivered.order.utr,
      attempt_id: delivered.attemptId,
      outcome: 'completed',
      status: 1,
    });
    const shown = printed(await cli(['orders:show', delivered.order.utr]));
    expect(shown).toMatchObject({ status: 1, delivery: 'delivered' });
    expect(shown.attempts[0]).toMatchObject({ outcome: 'completed', settled_by: 'operator', settle_reason: 'delivered, per the supplier by phone', settled_at: expect.any(String) });

    failed(await cli(['orders:settle', delivered.order.utr, String(delivered.attemptId), '--outcome', 'refused', '--reason', 'again']), `Attempt ${delivered.attemptId} is settled already (completed).`);
    const other = await open();
    failed(await cli(['orders:settle', other.order.utr, String(delivered.attemptId), '--outcome', 'refused', '--reason', 'x']), `No provider attempt of order ${other.order.utr} with id ${delivered.attemptId}.`);
    failed(await cli(['orders:settle', other.order.utr, String(other.attemptId), '--outcome', 'lost', '--reason', 'x']), 'The outcome field must be completed or refused.');
    expect((await cli(['orders:settle', other.order.utr, String(other.attemptId), '--outcome', 'refused'])).code).toBe(2);
    expect(printed(await cli(['orders:show', other.order.utr])).attempts[0].outcome).toBe('pending');
  });

  it('providers:list shows every provider with its circuit, last error and balance', async () => {
    const created = printed(await cli(['providers:add', '--name', named('Listed'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    await app.services.sql`
      update providers set circuit_open_until = now() + interval '1 minute', last_error = 'HTTP 503', last_error_at = now(), balance = 12.34
      where id = ${created.id}`;
    const listed = printed(await cli(['providers:list']));
    expect(listed.map((p: { id: number }) => p.id)).toEqual([...listed.map((p: { id: number }) => p.id)].sort((a, b) => a - b));
    expect(listed.find((p: { id: number }) => p.id === created.id)).toMatchObject({ circuit: 'open', circuit_open_until: expect.any(String), last_error: 'HTTP 503', balance: '12.34' });
  });

  it('providers:routes replaces the routes from --json or --file and prints them; without either it prints them', async () => {
    const { serviceId } = await createTopUpService(app.services.db);
    const provider = printed(await cli(['providers:add', '--name', named('Routed'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    expect(printed(await cli(['providers:routes', String(serviceId)]))).toEqual([]);
    const routes = printed(await cli(['providers:routes', String(serviceId), '--json', JSON.stringify([{ provider_id: provider.id, product_code: 'X', cost: '4.00' }])]));
    expect(routes).toEqual([{ position: 0, provider_id: provider.id, provider: provider.name, product_code: 'X', cost: '4.00', destination: null }]);
    expect(printed(await cli(['providers:routes', String(serviceId)]))).toEqual(routes);

    const file = join(await mkdtemp(join(tmpdir(), 'routes-')), 'routes.json');
    await writeFile(file, '[]');
    expect(printed(await cli(['providers:routes', String(serviceId), '--file', file]))).toEqual([]);
  });

  it('providers:routes refuses what the API refuses, and changes nothing', async () => {
    const { serviceId } = await createTopUpService(app.services.db);
    const provider = printed(await cli(['providers:add', '--name', named('Kept'), '--kind', 'http', '--base-url', 'https://s.example.com', '--credentials', JSON.stringify({ secret: SECRET })]));
    const kept = printed(await cli(['providers:routes', String(serviceId), '--json', JSON.stringify([{ provider_id: provider.id, product_code: 'KEEP' }])]));
    failed(await cli(['providers:routes', String(serviceId), '--json', JSON.stringify([{ provider_id: 999_999, product_code: 'X' }])]), 'The routes.0.provider id is invalid.');
    failed(await cli(['providers:routes', String(serviceId), '--json', JSON.stringify({ provider_id: provider.id, product_code: 'X' })]), 'The body is not a valid JSON list.');
    failed(await cli(['providers:routes', '999999', '--json', '[]']), 'No top-up service with id 999999.');
    expect(printed(await cli(['providers:routes', String(serviceId)]))).toEqual(kept);
  });

  it('orders:show prints an order with its attempts; an unknown utr is not found', async () => {
    const account = await createTestAccount(app, '0.00');
    const order = await createTopUpOrder(app.services.db, { accountId: account.id, unitPrice: '7.00' });
    const shown = printed(await cli(['orders:show', order.utr]));
    expect(shown).toMatchObject({ utr: order.utr, account_id: account.id, kind: 'top_up', total: '7.00', lines: [expect.objectContaining({ top_up_service_id: order.serviceId })], attempts: [] });
    const api = await expectJson(await app.request(`/admin/orders/${order.utr}`, { headers: { Authorization: `Bearer ${app.adminToken}` } }), 200);
    expect(shown).toEqual(api.message);
    failed(await cli(['orders:show', 'T0000NOSUCHORDER']), 'No order with the utr "T0000NOSUCHORDER".');
  });

  it('reports:margin prints the report of a range; the dates are checked as the API checks them', async () => {
    expect(printed(await cli(['reports:margin', '--from', '2020-01-01', '--to', '2020-02-01']))).toEqual({
      from: '2020-01-01',
      to: '2020-02-01',
      currency: 'USD',
      providers: [],
      services: [],
      total: { orders: 0, sales: '0.00', cost: '0.00', margin: '0.00' },
    });
    failed(await cli(['reports:margin', '--from', '2020-02-01', '--to', '2020-01-01']), 'The to field must be after from.');
    failed(await cli(['reports:margin', '--from', '2020-01-01', '--to', 'soon']), 'The to field must be a date (YYYY-MM-DD) or an ISO 8601 date and time with its offset.');
    expect((await cli(['reports:margin', '--from', '2020-01-01'])).code).toBe(2);
  });
});
