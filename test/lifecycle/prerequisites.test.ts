/**
 * The suites that run a Debian tool (npm run test:tools, npm run test:topology) check for it first: one missing stops
 * the run at once with one line naming the tool and the package to install, instead of a spawn error and a time-out
 * per test.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const run = promisify(execFile);

/** Runs the check of `tools` in a process whose PATH is `path`, as a suite's globalSetup runs it. */
async function check(tools: string[], path: string) {
  const script = `import { requireTools } from './test/helpers/tools.ts'; requireTools('npm run test:example', ${JSON.stringify(tools)})(); console.log('all there');`;
  return run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, PATH: path } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

describe('a suite that needs a tool', () => {
  it('stops before any test, in one line naming what is missing and the package that provides it', async () => {
    const missing = await check(['redis-server', 'initdb'], '/nonexistent');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('npm run test:example needs redis-server, missing here: install with `apt-get install redis-server`\n');
  });

  it('goes on when every tool is there', async () => {
    const present = await check(['redis-server', 'initdb'], process.env.PATH ?? '');
    expect(present).toMatchObject({ code: 0, stdout: 'all there\n' });
  });
});
