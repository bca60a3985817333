import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { operatorCommands as commands } from '../../src/commands.js';
import { createTestDatabase } from '../helpers/harness.js';
import { runCli, runCliProcess } from '../helpers/cli.js';
import { freePort } from '../helpers/processes.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
/** Where nothing listens: a command that tried to connect would fail with exit code 1, not answer. */
let unreachable: Record<string, string>;
/** A database name with a typo: it must still not exist after any command. */
const typo = `topup_typo_${randomBytes(4).toString('hex')}`;
/** The database records the key of its first start: every run here uses the same one. */
const codeKey = randomBytes(32).toString('hex');

beforeAll(async () => {
  database = await createTestDatabase();
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
  unreachable = { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/topup`, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
});
afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await database?.drop();
});

/** `npm run cli -- …` (the same program as the entry point, run in this process), its output and exit code. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { CODE_ENCRYPTION_KEY: codeKey, LOG_LEVEL: 'silent', ...env });
/** The same, as the operator's process of its own. */
const cliProcess = (args: string[], env: Record<string, string> = {}, stdin?: string) =>
  runCliProcess(args, { CODE_ENCRYPTION_KEY: codeKey, LOG_LEVEL: 'silent', ...env }, stdin);

const onTestDatabase = () => ({ DATABASE_URL: database.url, REDIS_URL: inject('redisUrl') });

async function databaseExists(name: string): Promise<boolean> {
  return (await sql`select 1 from pg_database where datname = ${name}`).length > 0;
}

describe('help', () => {
  it.each([['--help'], ['-h'], ['help']])('%s lists every command on stdout and exits 0 without connecting', async (flag) => {
    const run = await cli([flag], unreachable);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Usage: npm run cli -- <command>/);
    for (const name of Object.keys(commands)) expect(run.stdout).toContain(`  ${name} `);
    expect(run.stdout).toContain('Exit codes: 0 success, 1 the operation failed (message on stderr), 2 usage error.');
  });

  it('every command answers --help with its usage, arguments and options on stdout', { timeout: 120_000 }, async () => {
    for (const [name, command] of Object.entries(commands)) {
      const run = await cli([name, '--help'], unreachable);
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(new RegExp(`^Usage: npm run cli -- ${name} `));
      expect(run.stdout).toContain(command.description.slice(0, 40));
      for (const arg of command.args ?? []) expect(run.stdout).toContain(`<${arg.name}>`);
      for (const option of command.options ?? []) expect(run.stdout).toContain(`--${option.name}`);
    }
  });

  it('-h after a command and help <command> print the same help', async () => {
    const [short, long, viaHelp] = await Promise.all([
      cli(['accounts:create', '-h'], unreachable),
      cli(['accounts:create', '--help'], unreachable),
      cli(['help', 'accounts:create'], unreachable),
    ]);
    for (const run of [short, long, viaHelp]) expect(run.code).toBe(0);
    expect(short.stdout).toContain('--lastname <name>   last name (required)');
    expect(short.stdout).toBe(long.stdout);
    expect(viaHelp.stdout).toBe(long.stdout);
  });
});

describe('usage errors: exit 2, one line on stderr, nothing connected', () => {
  const refused = (run: { code: number | null; stdout: string; stderr: string }, message: RegExp) => {
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('see --help');
  };

  it('an unknown command', async () => {
    refused(await cli(['acounts:create'], unreachable), /unknown command 'acounts:create'.*Did you mean accounts:create\?/);
  });

  it('an unknown option, even with every required one given, creates nothing', async () => {
    const args = ['accounts:create', '--firstname', 'Typo', '--lastname', 'Flag', '--balanse', '500'];
    refused(await cli(args, onTestDatabase()), /unknown option '--balanse'.*Did you mean --balance\?/);
    expect(await sql`select 1 from accounts where firstname = 'Typo'`).toHaveLength(0);
    refused(await cli(args, { ...onTestDatabase(), DATABASE_URL: database.url.replace(database.name, typo) }), /unknown option '--balanse'/);
    expect(await databaseExists(typo)).toBe(false);
  });

  it('a missing required option, argument or option value', async () => {
    refused(await cli(['accounts:create', '--firstname', 'Ada'], unreachable), /required option '--lastname <name>' not specified/);
    refused(await cli(['stock'], unreachable), /missing required argument 'cardServiceId'/);
    refused(await cli(['codes:import', '3', '--file'], unreachable), /option '--file <path>' argument missing/);
  });

  it('an extra argument, and an argument that is not an id', async () => {
    refused(await cli(['stock', '3', '4'], unreachable), /too many arguments for 'stock'/);
    for (const bad of ['abc', '0', '-1', '2147483648']) {
      refused(await cli(['stock', bad], unreachable), /invalid for argument 'cardServiceId'. It must be an id from 1 to 2147483647/);
    }
  });

  it('no command at all shows the help on stderr', async () => {
    const run = await cli([], unreachable);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^Usage: npm run cli -- <command>/);
  });
});

describe('failed operations: exit 1, the message on stderr', () => {
  it('an unknown card service', async () => {
    const run = await cli(['stock', '999999'], onTestDatabase());
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: 'No card service with id 999999.\n' });
  });

  it('a --file that cannot be read: one line naming the option, the path and why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-file-'));
    const missing = join(dir, 'nope.txt');
    const runs: Array<[args: string[], stderr: string]> = [
      [['codes:import', '3', '--file', missing], `Cannot read --file ${missing}: no such file.\n`],
      [['codes:import', '3', '--file', dir], `Cannot read --file ${dir}: it is a directory.\n`],
      [['store:categories:create', '--file', missing], `Cannot read --file ${missing}: no such file.\n`],
      [['providers:routes', '3', '--file', join(missing, 'x.json')], `Cannot read --file ${join(missing, 'x.json')}: no such file.\n`],
      [['providers:update', '3', '--credentials-file', dir], `Cannot read --credentials-file ${dir}: it is a directory.\n`],
    ];
    for (const [args, stderr] of runs) {
      expect(await cli(args, onTestDatabase()), args.join(' ')).toMatchObject({ code: 1, stdout: '', stderr });
    }
  });

  it('a mistyped database name is an error naming DATABASE_URL, never a new database', async () => {
    const run = await cli(['stock', '1'], { ...onTestDatabase(), DATABASE_URL: database.url.replace(database.name, typo) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`DATABASE_URL: database "${typo}" does not exist`);
    expect(await databaseExists(typo)).toBe(false);
  });

  it('the API validation messages, one per line, and nothing written', async () => {
    const ledger = async () => (await sql`select count(*)::int as n from balance_ledger`)[0]!.n as number;
    const before = await ledger();
    const run = await cli(['accounts:balance', '1', '--amount', '0', '--reason', ' '], onTestDatabase());
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('The amount field must not be zero.\nThe reason field is required.\n');
    expect(await ledger()).toBe(before);
  });
});

describe('success', () => {
  it('prints the result as JSON on stdout only, exit 0', async () => {
    const run = await cli(['accounts:create', '--firstname=Ada', '--lastname', 'Lovelace', '--balance', '5'], onTestDatabase());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const created = JSON.parse(run.stdout) as { id: number };
    const [row] = await sql`select firstname, balance from accounts where id = ${created.id}`;
    expect(row).toEqual({ firstname: 'Ada', balance: '5.00' });
  });
});

describe('the process: npm run cli answers with its exit code and its two streams', () => {
  it('help 0 on stdout, a usage error 2, a failed operation 1, a start that cannot connect 1, a result 0 as JSON', { timeout: 60_000 }, async () => {
    const [help, usage, failed, unconnected, created] = await Promise.all([
      cliProcess(['--help'], unreachable),
      cliProcess(['stock', 'abc'], unreachable),
      cliProcess(['stock', '999999'], onTestDatabase()),
      cliProcess(['stock', '1'], unreachable),
      cliProcess(['store:categories:create', '--file', '-'], onTestDatabase(), '{"name":"Piped","type":"card"}'),
    ]);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run cli -- <command>/);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toMatch(/invalid for argument 'cardServiceId'.*see --help/);
    expect(failed).toMatchObject({ code: 1, stdout: '', stderr: 'No card service with id 999999.\n' });
    expect(unconnected).toMatchObject({ code: 1, stdout: '' });
    expect(unconnected.stderr).toMatch(/^DATABASE_URL: cannot connect to 127\.0\.0\.1:\d+ \(connection refused\)\n$/);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'Piped', type: 'card' });
  });
});
