/**
 * The README's TypeScript: its ten lines under "Integrating with TypeScript" and the whole walk-through
 * (clients/typescript/examples/walk-through.ts), each run as a reseller runs it, in a process of its own with the demo
 * account's keys, against a fresh `npm start` with the demo data.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { ROOT, runEntry, type Run } from '../helpers/processes.js';

const { serviceEnv, startServing } = entryPointsOnOwnDatabase();

/** The first ```ts block under `## heading` of the README. */
async function readmeTypeScript(heading: string): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`## ${heading}\n`));
  const block = /^```ts\n([^]*?)^```$/m.exec(section);
  if (!block) throw new Error(`no ts block under "${heading}"`);
  return block[1]!;
}

describe("the README's TypeScript", () => {
  it('runs to its end against `npm start`: the ten lines, then the whole walk-through', { timeout: 120_000 }, async () => {
    const env = await serviceEnv();
    await startServing(env);
    const seed = runEntry('src/bin/seed.ts', env, { args: ['--json'] });
    expect((await seed.exit).code, seed.stderr()).toBe(0);
    const keys = JSON.parse(seed.stdout()) as { publicKey: string; secretKey: string };
    // The programs import the package by its name; the `source` condition resolves it to the client's TypeScript.
    const run = async (file: string): Promise<Run> => {
      const program = runEntry(file, { ...env, NODE_OPTIONS: '--conditions=source', STORE_URL: `http://localhost:${env.PORT}`, PUBLICKEY: keys.publicKey, SECRETKEY: keys.secretKey });
      const { code } = await program.exit;
      expect(code, `${file}\n${program.stderr()}\n--- stdout ---\n${program.stdout()}`).toBe(0);
      return program;
    };

    // Inside the package, so the package's name resolves to itself as it does in the examples folder.
    const folder = await mkdtemp(join(ROOT, 'clients/typescript/.build-'));
    try {
      const tenLines = join(folder, 'readme.ts');
      // Only where the service answers differs from a reader's machine: this test's port instead of 3000.
      await writeFile(tenLines, (await readmeTypeScript('Integrating with TypeScript')).replaceAll('localhost:3000', `localhost:${env.PORT}`));
      expect((await run(relative(ROOT, tenLines))).stdout()).toMatch(/^ordered Steam \$10: C[0-9A-Z]+$/m);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }

    const walkThrough = (await run('clients/typescript/examples/walk-through.ts')).stdout();
    expect(walkThrough).toMatch(/^categories: .+$/m);
    expect(walkThrough).toMatch(/^placed: C[0-9A-Z]+ T[0-9A-Z]+$/m);
    expect(walkThrough).toMatch(/^C[0-9A-Z]+: completed, 2 codes$/m);
    expect(walkThrough).toMatch(/^statement: order_debit -\d+\.\d{2} → \d+\.\d{2} USD$/m);
    expect(walkThrough).toMatch(/^refused \(above_max_price, 409\): The order costs 10\.00 USD, above max_price 0\.01\.$/m);
  });
});
