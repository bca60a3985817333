import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/** The first ```sh block under the README heading `heading` (a line `## heading` or `### heading`), as written. */
export async function readmeShellBlock(heading: string): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const at = readme.search(new RegExp(`^#{2,3} ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  if (at < 0) throw new Error(`README.md has no heading "${heading}"`);
  const block = /```sh\n([^]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md has no sh block under "${heading}"`);
  return block[1]!;
}

export type ScriptRun = { code: number | null; stdout: string; stderr: string };

/**
 * Runs a README block with bash from the repository root, as a reader pastes it: but stopping at the first command
 * that fails, and `curl` failing on an HTTP error (its answer still printed), so an example that no longer works
 * fails the test.
 */
export function runShell(script: string, env: Record<string, string>): Promise<ScriptRun> {
  const strict = 'set -euo pipefail\ncurl() { command curl --fail-with-body --show-error --max-time 20 "$@"; }\n';
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', strict + script], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
