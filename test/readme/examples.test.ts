/**
 * The shell examples of the README and of docs/, run in order in one shell as a new user pastes them into a terminal beside
 * `npm start` (the real entry point, on a fresh database with the demo data): every command must succeed and every
 * `curl` must get a 2xx, so an example that drifts from the service (an id, a date, a field) fails here.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entryPointsOnOwnDatabase } from '../helpers/entry.js';
import { ROOT } from '../helpers/processes.js';
import { DOCUMENTS, documentsInDocs, readmeShellBlocks, runShell } from '../helpers/readme.js';

const { serviceEnv, startServing } = entryPointsOnOwnDatabase();

// The codes file the operator example writes in the repository root.
afterAll(() => rm(join(ROOT, 'codes.txt'), { force: true }));

describe('the README examples', () => {
  it('are read from every document of docs/', async () => {
    expect(DOCUMENTS).toEqual(expect.arrayContaining(await documentsInDocs()));
  });

  it('every shell block runs, in order, against a fresh `npm start`', { timeout: 180_000 }, async () => {
    const env = await serviceEnv();
    await startServing(env);
    const blocks = await readmeShellBlocks();
    // The walk-through, webhooks, operator tasks, store management, metrics and suppliers: none may be skipped quietly.
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    // Each block announces itself on stderr, so a failure names the README line it came from.
    const script = blocks.map((block) => `echo '>>> ${block.file}:${block.line} (${block.heading})' >&2\n${block.script}`).join('\n');
    // Only where the service answers differs from a reader's terminal: this test's port instead of 3000.
    const run = await runShell(script.replaceAll('localhost:3000', `localhost:${env.PORT}`), env);
    expect(run.code, `${run.stderr.slice(-6000)}\n--- stdout ---\n${run.stdout.slice(-4000)}`).toBe(0);
    // A few answers the examples promise in their comments.
    expect(run.stdout).toMatch(/Your order number is T[0-9A-Z]+/);
    expect(run.stdout).toMatch(/"added":50,"skipped":0,"fulfilled_orders":\d+/);
    expect(run.stdout).toMatch(/"secret":"whsec_/);
    expect(run.stdout).toMatch(/^orders_placed_total\{kind="card",mode="live"\} \d+$/m);
  });
});
