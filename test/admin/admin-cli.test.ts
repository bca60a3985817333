import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, tokenFor } from '../helpers/api.js';
import { cliEnvOf, cliJson, runCli } from '../helpers/cli.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createCardService, createOrder, createTopUpService } from '../helpers/fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

/** `npm run cli -- …` on the test app's database and Redis. */
const cli = (args: string[], stdin?: string) => runCli(args, cliEnvOf(app), stdin);
const json = cliJson;

describe('operator CLI', () => {
  it('accounts:create prints working credentials; accounts:balance moves the balance', async () => {
    const created = json(await cli(['accounts:create', '--firstname', 'Grace', '--lastname', 'Hopper', '--balance', '12.00']));
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'id', 'publicKey', 'secretKey']);
    await tokenFor(app, created as { publicKey: string; secretKey: string });
    expect(json(await cli(['accounts:balance', String(created.id), '--amount', '-2.50', '--reason', 'fee']))).toEqual({ balance: 9.5 });
  });

  it('accounts:create explains validation failures and writes nothing', async () => {
    const run = await cli(['accounts:create', '--firstname', 'Grace', '--lastname', ' ', '--currency', 'eur']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The lastname field is required.');
    const rows = await app.services.sql`select 1 from accounts where firstname = 'Grace' and lastname = ''`;
    expect(rows).toHaveLength(0);
  });

  it('prices per account (C24): tiers and their own prices, currencies, an account moved to a tier and a currency', async () => {
    const { serviceId } = await createCardService(app.services.db, '10.00');
    const tier = json(await cli(['store:price-tiers:create', '--json', '{"name":"Wholesale CLI","percent_off":"12.5"}']));
    expect(tier).toMatchObject({ name: 'Wholesale CLI', percent_off: '12.50', accounts: 0, prices: [] });
    const priced = json(await cli(['store:price-tiers:prices', String(tier.id), '--file', '-'], JSON.stringify([{ kind: 'card', service_id: serviceId, price: '8' }])));
    expect(priced.prices).toEqual([{ kind: 'card', service_id: serviceId, price: '8.00' }]);
    expect(json(await cli(['store:currencies:set', 'CHF', '--rate', '0.88', '--symbol', 'Fr']))).toMatchObject({ code: 'CHF', rate: '0.88000000', base: false });
    const currencies = json(await cli(['store:currencies:list'])) as unknown as Array<{ code: string }>;
    expect(currencies.map((c) => c.code)).toEqual(['USD', 'CHF']);

    const created = json(await cli(['accounts:create', '--firstname', 'Swiss', '--lastname', 'Shop', '--currency', 'CHF']));
    expect(json(await cli(['accounts:update', String(created.id), '--price-tier-id', String(tier.id)]))).toEqual({ id: created.id, price_tier_id: tier.id, currency: 'CHF', currency_symbol: 'Fr', allowed_ips: [] });
    const listed = json(await cli(['store:price-tiers:list'])) as unknown as Array<{ id: number; accounts: number }>;
    expect(listed.find((t) => t.id === tier.id)!.accounts).toBe(1);
    expect(json(await cli(['accounts:update', String(created.id), '--price-tier-id', 'none', '--currency', 'USD']))).toMatchObject({ price_tier_id: null, currency: 'USD', currency_symbol: '$' });
    // C26: the address allow-list, comma-separated; `none` allows any address again.
    expect(json(await cli(['accounts:update', String(created.id), '--allowed-ips', '203.0.113.7, 198.51.100.0/24']))).toMatchObject({ allowed_ips: ['203.0.113.7', '198.51.100.0/24'] });
    expect(json(await cli(['accounts:update', String(created.id), '--allowed-ips', 'none']))).toMatchObject({ allowed_ips: [] });

    const refused = await cli(['store:currencies:set', 'USD', '--rate', '1', '--symbol', '$']);
    expect([refused.code, refused.stderr]).toEqual([1, 'The rate of USD, the store currency, is always 1.\n']);
    const unknown = await cli(['accounts:update', String(created.id), '--price-tier-id', '999999']);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'The selected price tier id is invalid.\n']);
  });

  it('codes:import reads a file or stdin, skips duplicates and fulfils waiting orders without a worker', async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const account = await createTestAccount(app);
    const waiting = await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, status: 3, codesOwed: 1 });
    const file = join(await mkdtemp(join(tmpdir(), 'codes-')), 'codes.txt');
    await writeFile(file, 'C-1\nC-2\n\nC-1\n');
    expect(json(await cli(['codes:import', String(serviceId), '--file', file]))).toEqual({ added: 2, skipped: 1, fulfilled_orders: 1 });
    const [order] = await app.services.sql`select status from orders where id = ${waiting.id}`;
    expect(order!.status).toBe(1);

    expect(json(await cli(['codes:import', String(serviceId), '--file', '-'], 'C-2\nC-3\n'))).toEqual({ added: 1, skipped: 1, fulfilled_orders: 0 });
    expect(json(await cli(['stock', String(serviceId)]))).toEqual({ available: 2, reserved_for_stock_short: 0 });
  });

  it('codes:import refuses an unknown card service', async () => {
    const run = await cli(['codes:import', '999999', '--file', '-'], 'X\n');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('No card service with id 999999.\n');
  });

  it('orders:list, orders:complete and orders:refund', async () => {
    const top = await createTopUpService(app.services.db);
    const account = await createTestAccount(app, '0.00');
    const [first, second] = [
      await createOrder(app.services.db, { accountId: account.id, ...top }),
      await createOrder(app.services.db, { accountId: account.id, ...top, unitPrice: '4.00' }),
    ];
    const listed = json(await cli(['orders:list', '--status', 'initiate', '--per-page', '50']));
    expect(listed.per_page).toBe(50);
    expect(listed.data.map((o: { utr: string }) => o.utr)).toEqual(expect.arrayContaining([first.utr, second.utr]));
    expect(json(await cli(['orders:complete', first.utr, '--note', 'done']))).toEqual({ utr: first.utr, status: 1 });
    expect(json(await cli(['orders:refund', second.utr, '--reason', 'unavailable']))).toEqual({
      utr: second.utr,
      status: 2,
      refunded_amount: '4.00',
    });
    const refused = await cli(['orders:refund', first.utr, '--reason', 'late']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The order is completed and cannot be refunded.');
  });
});
