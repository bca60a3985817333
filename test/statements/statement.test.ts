import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, buyer, expectFailure, expectJson } from '../helpers/api.js';
import { cliEnvOf, cliJson, runCli } from '../helpers/cli.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { ROOT } from '../helpers/processes.js';

/** C24's statement: an account's own ledger, newest first, as JSON pages or CSV, for the client and for operators. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const admin = (method: string, path: string, body?: unknown) => adminOf(app)(method, path, body);

/**
 * An account with every kind of entry: its opening deposit of 100.00, an order of 2 × 7.25, an operator's credit with
 * a reason that needs quoting in CSV, the order refunded, and a debit whose reason a spreadsheet would run.
 */
async function accountWithHistory() {
  const { keys, api, store } = await buyer(app, '100.00');
  const card = await createCard(app.services.db, { services: [{ price: '7.25' }] });
  const { data: placed } = await store.POST('/api/card/make-order', { body: { service_ids: [card.services[0]!.id], quantities: [2] } });
  const utr = placed.message.utr;
  await expectJson(await admin('POST', `/accounts/${keys.id}/balance`, { amount: '20.00', reason: 'Goodwill, "late" codes\nsecond line' }), 200);
  await expectJson(await admin('POST', `/orders/${utr}/refund`, { reason: 'Out of stock' }), 200);
  await expectJson(await admin('POST', `/accounts/${keys.id}/balance`, { amount: '-5.00', reason: '=HYPERLINK("x")' }), 200);
  return { keys, api, store, utr };
}

describe('GET /api/account/statement', () => {
  it('shows every balance move, newest first, each with the balance after it, in exact decimals', async () => {
    const { store, utr } = await accountWithHistory();
    const page = (await store.GET('/api/account/statement')).data.message;
    // 20 entries a page unless per_page says otherwise.
    expect(page).toMatchObject({ total: 5, per_page: 20, current_page: 1 });
    const entries = page.data;
    expect(entries.map(({ kind, amount, balance_after, currency, utr: order, reason }) => ({ kind, amount, balance_after, currency, utr: order, reason }))).toEqual([
      { kind: 'adjustment', amount: '-5.00', balance_after: '115.00', currency: 'USD', utr: undefined, reason: '=HYPERLINK("x")' },
      { kind: 'order_refund', amount: '14.50', balance_after: '120.00', currency: 'USD', utr, reason: 'Out of stock' },
      { kind: 'deposit', amount: '20.00', balance_after: '105.50', currency: 'USD', utr: undefined, reason: 'Goodwill, "late" codes\nsecond line' },
      { kind: 'order_debit', amount: '-14.50', balance_after: '85.50', currency: 'USD', utr, reason: undefined },
      { kind: 'deposit', amount: '100.00', balance_after: '100.00', currency: 'USD', utr: undefined, reason: 'Opening balance' },
    ]);
    // Absent, not null, where an entry has no order or reason.
    expect(Object.keys(entries[3]!)).not.toContain('reason');
    expect(entries[0]!.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((a, b) => b - a));
  });

  it('pages as every list does (C11)', async () => {
    const { store } = await accountWithHistory();
    const page = (await store.GET('/api/account/statement', { params: { query: { per_page: 2, page: 3 } } })).data.message;
    expect(page).toMatchObject({ current_page: 3, per_page: 2, total: 5, last_page: 3, from: 5, to: 5, next_page_url: null });
    expect(page.data.map((e) => e.kind)).toEqual(['deposit']);
    expect(page.prev_page_url).toMatch(/\/api\/account\/statement\?per_page=2&page=2$/);
  });

  it('keeps to the range: days in UTC with both ends included, or instants', async () => {
    const { keys, api } = await accountWithHistory();
    const ids = (await app.services.sql`select id from balance_ledger where account_id = ${keys.id} order by id`).map((r) => r.id as string);
    const days = ['2026-10-31T23:59:59.999999Z', '2026-11-01T00:00:00Z', '2026-11-15T12:00:00Z', '2026-11-30T23:59:59Z', '2026-12-01T00:00:00Z'];
    for (const [i, at] of days.entries()) await app.services.sql`update balance_ledger set created_at = ${at} where id = ${ids[i]!}`;
    const kinds = async (query: string) => ((await expectJson(await api.get(`/api/account/statement?${query}`), 200)).message.data as Array<{ id: number }>).map((e) => String(e.id));
    expect(await kinds('from=2026-11-01&to=2026-11-30')).toEqual([ids[3], ids[2], ids[1]]);
    expect(await kinds('from=2026-11-30')).toEqual([ids[4], ids[3]]);
    expect(await kinds('to=2026-10-31')).toEqual([ids[0]]);
    expect(await kinds('from=2026-11-15T12:00:00Z&to=2026-11-15T12:00:00%2B00:00')).toEqual([ids[2]]);
  });

  it('format=csv streams every entry of the range with the same columns, quoting what needs it', async () => {
    const { api, utr } = await accountWithHistory();
    const response = await api.get('/api/account/statement?format=csv&per_page=1');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="statement-\d+\.csv"$/);
    const text = await response.text();
    const json = (await expectJson(await api.get('/api/account/statement'), 200)).message.data as Array<{ id: number; created_at: string }>;
    expect(text).toBe(
      [
        'id,created_at,kind,amount,balance_after,currency,utr,reason',
        `${json[0]!.id},${json[0]!.created_at},adjustment,-5.00,115.00,USD,,"'=HYPERLINK(""x"")"`,
        `${json[1]!.id},${json[1]!.created_at},order_refund,14.50,120.00,USD,${utr},Out of stock`,
        `${json[2]!.id},${json[2]!.created_at},deposit,20.00,105.50,USD,,"Goodwill, ""late"" codes\nsecond line"`,
        `${json[3]!.id},${json[3]!.created_at},order_debit,-14.50,85.50,USD,${utr},`,
        `${json[4]!.id},${json[4]!.created_at},deposit,100.00,100.00,USD,,Opening balance`,
        '',
      ].join('\r\n'),
    );
  });
});

describe('the statement refuses what it cannot read', () => {
  it.each([
    ['from=yesterday', ['The from field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
    ['to=2026-02-30', ['The to field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
    ['from=2026-11-01T12:00:00', ['The from field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
    ['from=2026-11-02&to=2026-11-01', ['The to field must be a date after or equal to from.']],
    ['format=xml', ['The format field must be json or csv.']],
    ['per_page=0', ['The per page field must be a positive integer.']],
    ['from=2026-11-01T12:00:00%2B16:00', ['The from field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
    ['to=0000-01-01', ['The to field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
    ['from=2026-11-01T24:00:00Z', ['The from field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).']],
  ])('%s is a 422 naming the field', async (query, errors) => {
    const { api } = await buyer(app, '1.00');
    expect(await expectFailure(await api.get(`/api/account/statement?${query}`), 422)).toEqual(errors);
  });
});

describe('the statement is the caller’s own', () => {
  it('needs a token, and shows no entry of another account', async () => {
    const { keys } = await accountWithHistory();
    expect((await app.request('/api/account/statement')).status).toBe(401);
    expect((await app.request('/api/account/statement', { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
    const { api } = await buyer(app, '0');
    const mine = (await expectJson(await api.get('/api/account/statement?format=json'), 200)).message;
    expect(mine.total).toBe(0);
    const csv = await (await api.get('/api/account/statement?format=csv')).text();
    expect(csv.trim().split('\r\n')).toHaveLength(1);
    expect(csv).not.toContain(String(keys.id));
  });
});

describe('GET /admin/accounts/:id/statement and accounts:statement', () => {
  it("show any account's statement as its owner sees it", async () => {
    const { keys, api } = await accountWithHistory();
    const own = (await expectJson(await api.get('/api/account/statement?from=2000-01-01'), 200)).message.data;
    const viaAdmin = (await expectJson(await admin('GET', `/accounts/${keys.id}/statement?from=2000-01-01`), 200)).message;
    expect(viaAdmin.data).toEqual(own);
    const viaCli = cliJson(await runCli(['accounts:statement', String(keys.id), '--from', '2000-01-01', '--per-page', '3'], cliEnvOf(app)));
    expect(viaCli).toEqual({ current_page: 1, per_page: 3, total: 5, data: own.slice(0, 3) });
    const csv = await runCli(['accounts:statement', String(keys.id), '--csv'], cliEnvOf(app));
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe(await (await api.get('/api/account/statement?format=csv')).text());
  });

  it('refuses an unknown account, a bad range and a missing admin token', async () => {
    expect(await expectFailure(await admin('GET', '/accounts/999999/statement'), 404)).toBe('No account with id 999999.');
    expect(await expectFailure(await admin('GET', '/accounts/1/statement?to=soon'), 422)).toEqual([
      'The to field must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).',
    ]);
    expect((await app.request('/admin/accounts/1/statement')).status).toBe(401);
    const unknown = await runCli(['accounts:statement', '999999'], cliEnvOf(app));
    expect(unknown).toMatchObject({ code: 1, stderr: 'No account with id 999999.\n' });
  });

  it('accounts:statement --csv piped into a reader that stops early (| head) ends quietly', { timeout: 60_000 }, async () => {
    const { keys } = await buyer(app, '0');
    // Far more than a pipe holds: the command is still writing when head has gone.
    await app.services.sql`
      insert into balance_ledger (account_id, amount, balance_after, kind, currency, reason)
      select ${keys.id}, 1, g, 'deposit', 'USD', 'entry ' || g from generate_series(1, 20000) g`;
    const env = { ...process.env, ...cliEnvOf(app) };
    const command = `set -o pipefail; "${process.execPath}" --import tsx src/bin/cli.ts accounts:statement ${keys.id} --csv | head -c 100 > /dev/null`;
    const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
