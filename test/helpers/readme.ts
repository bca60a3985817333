import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/** A shell block of the README: where it starts (its fence's line) and what it says. */
export type ShellBlock = { line: number; heading: string; script: string };

/** Marks a shell block that is not run by the examples test, with the reason: `<!-- not run: starts the service -->`. */
const NOT_RUN = /<!-- not run: [^>]+ -->\s*$/;

/** Every ```sh and ```bash block of the README in order, but those marked not run. */
export async function readmeShellBlocks(): Promise<ShellBlock[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const blocks: ShellBlock[] = [];
  let heading = '';
  const fence = /^```(sh|bash)\n([^]*?)^```$|^#{2,3} (.+)$/gm;
  for (let match = fence.exec(readme); match; match = fence.exec(readme)) {
    if (match[3]) {
      heading = match[3];
      continue;
    }
    if (NOT_RUN.test(readme.slice(0, match.index))) continue;
    blocks.push({ line: readme.slice(0, match.index).split('\n').length, heading, script: match[2]! });
  }
  return blocks;
}

/** The first shell block under the README heading `heading` (a line `## heading` or `### heading`), as written. */
export async function readmeShellBlock(heading: string): Promise<string> {
  const block = (await readmeShellBlocks()).find((candidate) => candidate.heading === heading);
  if (!block) throw new Error(`README.md has no run sh block under "${heading}"`);
  return block.script;
}

export type ScriptRun = { code: number | null; stdout: string; stderr: string };

/**
 * Runs a README block with bash from the repository root, as a reader pastes it: but stopping at the first command
 * that fails, and `curl` failing on an HTTP error (its answer still printed), so an example that no longer works
 * fails the test.
 */
export function runShell(script: string, env: Record<string, string>, cwd = ROOT): Promise<ScriptRun> {
  const strict = 'set -euo pipefail\ncurl() { command curl --fail-with-body --show-error --max-time 20 "$@"; }\n';
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', strict + script], { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
