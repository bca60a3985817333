import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/http/server.js';
import { chunkedBody, createTestAccount, expectFailure, expectJson } from '../helpers/api.js';
import { createCardService, createOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { cliEnvOf, runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startTestApp({ workers: true });
  dir = await mkdtemp(join(tmpdir(), 'codes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await app?.close();
});

/** `count` distinct codes of `length` characters, one per line. */
const codes = (label: string, count: number, length = 24) =>
  Array.from({ length: count }, (_, i) => `${label}-${i}-`.padEnd(length, 'X'));

const stored = async (serviceId: number) =>
  (await app.services.sql`select count(*)::int as n from card_codes where card_service_id = ${serviceId}`)[0]!.n as number;

/** The CLI as an operator runs it, against the test app's database and Redis. */
const cli = (args: string[]) => runCli(args, cliEnvOf(app));

/** The CLI run on a terminal (`script` gives it one): its exit code and everything it printed there. */
async function onTerminal(args: string[], env: Record<string, string> = {}) {
  const typescript = join(dir, 'typescript');
  const command = [process.execPath, '--import', 'tsx', 'src/bin/cli.ts', ...args].join(' ');
  const child = spawn('script', ['-qec', command, typescript], { cwd: ROOT, env: { ...process.env, ...cliEnvOf(app), ...env }, stdio: 'ignore' });
  const code = await new Promise((resolve) => child.on('close', resolve));
  return { code, screen: await readFile(typescript, 'utf8') };
}

const upload = (serviceId: number, body: BodyInit, contentType = 'text/plain') =>
  app.request(`/admin/card-services/${serviceId}/codes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': contentType },
    body,
    // A stream is sent as it is made (chunked).
    duplex: 'half',
  } as RequestInit);

describe('codes:import from the command line', () => {
  it('streams 50,000 codes from a file in batches, skipping repeats, without progress output off a terminal', { timeout: 120_000 }, async () => {
    const { serviceId } = await createCardService(app.services.db);
    const given = codes('CLI', 50_000);
    const file = join(dir, 'fifty-thousand.txt');
    await writeFile(file, [...given, ...given.slice(0, 1_000), ''].join('\r\n'));
    const started = Date.now();
    const run = await cli(['codes:import', String(serviceId), '--file', file]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ added: 50_000, skipped: 1_000, fulfilled_orders: 0 });
    expect(run.stderr).toBe('');
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await stored(serviceId)).toBe(50_000);
  });

  it.runIf(process.platform === 'linux')('shows a progress bar with codes read, added and skipped on a terminal', { timeout: 60_000 }, async () => {
    const { serviceId } = await createCardService(app.services.db);
    const file = join(dir, 'progress.txt');
    await writeFile(file, [...codes('BAR', 12_000), 'BAR-0-'.padEnd(24, 'X')].join('\n'));
    const { code, screen } = await onTerminal(['codes:import', String(serviceId), '--file', file]);
    expect(code, screen).toBe(0);
    expect(screen).toContain('100% | read 12001 | added 12000 | skipped 1');
    expect(screen).toContain('"added": 12000');
  });

  it.runIf(process.platform === 'linux')('keeps the log lines of the orders it fulfils out of the bar, at the default LOG_LEVEL', { timeout: 60_000 }, async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const account = await createTestAccount(app);
    for (let i = 0; i < 5; i++) await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, status: 3, codesOwed: 1 });
    const file = join(dir, 'orders-waiting.txt');
    await writeFile(file, codes('LOG', 3_000).join('\n'));
    // LOG_LEVEL unset, as an operator has it: the service would log each order it moves (at info).
    const { code, screen } = await onTerminal(['codes:import', String(serviceId), '--file', file], { LOG_LEVEL: '' });
    expect(code, screen).toBe(0);
    expect(screen).toContain('100% | read 3000 | added 3000 | skipped 0');
    expect(screen).toContain('"fulfilled_orders": 5');
    expect(screen).not.toContain('{"level"');
  });

  it('is all or nothing: a bad code after the first batches stores none', { timeout: 60_000 }, async () => {
    const { serviceId } = await createCardService(app.services.db);
    const file = join(dir, 'bad-line.txt');
    await writeFile(file, [...codes('BAD', 12_000), 'Y'.repeat(501), 'LAST'].join('\n'));
    const run = await cli(['codes:import', String(serviceId), '--file', file]);
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: 'The code on line 12001 must not be greater than 500 characters.\n' });
    expect(await stored(serviceId)).toBe(0);
  });

  it('refuses a file that is not there', async () => {
    const { serviceId } = await createCardService(app.services.db);
    const run = await cli(['codes:import', String(serviceId), '--file', join(dir, 'missing.txt')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`Cannot read --file ${join(dir, 'missing.txt')}: no such file.\n`);
  });
});

describe('POST /admin/card-services/:id/codes with text/plain', () => {
  it('imports 50,000 codes (far past the 1 MiB JSON limit), skips repeats and stock, then fulfils waiting orders', { timeout: 60_000 }, async () => {
    const { cardId, serviceId } = await createCardService(app.services.db);
    const given = codes('HTTP', 50_000, 32);
    const json = await expectJson(await upload(serviceId, JSON.stringify({ codes: given.slice(0, 100) }), 'application/json'), 200);
    expect(json.message).toEqual({ added: 100, skipped: 0, fulfilled_orders: 0 });
    const account = await createTestAccount(app);
    const waiting = await createOrder(app.services.db, { accountId: account.id, cardId, serviceId, quantity: 102, codesOwed: 102, status: 3 });
    const text = `${[...given, given[7]].join('\n')}\n`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(LIMITS.MAX_BODY_BYTES);
    const body = await expectJson(await upload(serviceId, text), 200);
    expect(body.message).toEqual({ added: 49_900, skipped: 101, fulfilled_orders: 1 });
    const [order] = await app.services.sql`select status from orders where id = ${waiting.id}`;
    expect(order!.status).toBe(1);
    expect(await stored(serviceId)).toBe(50_000);
  });

  it('reads a chunked upload as it arrives, lines split across chunks', async () => {
    const { serviceId } = await createCardService(app.services.db);
    const parts = ['CHUNK-1\nCHU', 'NK-2\r', '\nCHUNK-3', '\n\nCHUNK-', '4'];
    const body = await expectJson(await upload(serviceId, chunkedBody(() => parts.shift() ?? null)), 200);
    expect(body.message).toMatchObject({ added: 4, skipped: 0 });
  });

  it('keeps the 1 MiB limit for JSON bodies on the same route', async () => {
    const { serviceId } = await createCardService(app.services.db);
    const json = JSON.stringify({ codes: codes('BIG', 9_000, 120) });
    expect(Buffer.byteLength(json)).toBeGreaterThan(LIMITS.MAX_BODY_BYTES);
    expect(await expectFailure(await upload(serviceId, json, 'application/json'), 413)).toBe('The request body is too large.');
    expect(await stored(serviceId)).toBe(0);
  });

  it('is all or nothing: a bad code after the first batches is a 422 naming its line, and nothing is stored', async () => {
    const { serviceId } = await createCardService(app.services.db);
    const text = [...codes('BAD', 6_000), 'Z'.repeat(501)].join('\n');
    expect(await expectFailure(await upload(serviceId, text), 422)).toEqual(['The code on line 6001 must not be greater than 500 characters.']);
    expect(await expectFailure(await upload(serviceId, 'OK-1\nNUL\u0000CODE\n'), 422)).toEqual([
      'The code on line 2 must not contain NUL characters or unpaired surrogates.',
    ]);
    expect(await expectFailure(await upload(serviceId, new Uint8Array([0x4f, 0x4b, 0x0a, 0xff, 0xfe])), 422)).toEqual(['The codes field must be UTF-8 text.']);
    expect(await stored(serviceId)).toBe(0);
  });

  it('answers 413 to an upload over 100 MiB while it streams, and keeps none of its codes', { timeout: 120_000 }, async () => {
    const { serviceId } = await createCardService(app.services.db);
    const filler = `${' '.repeat(1023)}\n`.repeat(64);
    let sent = 0;
    const body = chunkedBody(() => {
      if (sent > LIMITS.MAX_UPLOAD_BYTES) return null;
      const text = sent === 0 ? `${codes('OVER', 6_000).join('\n')}\n` : filler;
      sent += Buffer.byteLength(text);
      return text;
    });
    expect(await expectFailure(await upload(serviceId, body), 413)).toBe('The request body is too large.');
    expect(sent).toBeGreaterThan(LIMITS.MAX_UPLOAD_BYTES);
    expect(await stored(serviceId)).toBe(0);
  });
});
