import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/** A shell block of a document: which one, where it starts (its fence's line) and what it says. */
export type ShellBlock = { file: string; line: number; heading: string; script: string };

/**
 * The documents in reading order: the README's walk-through first, then the guides whose examples continue it in the
 * same terminal (an API client's, then an operator's). Every document of docs/ is listed, so none is left unread.
 */
export const DOCUMENTS = [
  'README.md',
  'docs/api.md',
  'docs/operations.md',
  'docs/suppliers.md',
  'docs/scaling.md',
  'docs/performance.md',
  'docs/testing.md',
  'docs/architecture.md',
];

/** The Markdown files of docs/, to check DOCUMENTS names each. */
export async function documentsInDocs(): Promise<string[]> {
  return (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
}

/** Marks a shell block that is not run by the examples test, with the reason: `<!-- not run: starts the service -->`. */
const NOT_RUN = /<!-- not run: [^>]+ -->\s*$/;

/** Every ```sh and ```bash block of the documents, in reading order, but those marked not run. */
export async function readmeShellBlocks(): Promise<ShellBlock[]> {
  const blocks: ShellBlock[] = [];
  for (const file of DOCUMENTS) {
    const text = await readFile(join(ROOT, file), 'utf8');
    let heading = '';
    const fence = /^```(sh|bash)\n([^]*?)^```$|^#{1,3} (.+)$/gm;
    for (let match = fence.exec(text); match; match = fence.exec(text)) {
      if (match[3]) {
        heading = match[3];
        continue;
      }
      if (NOT_RUN.test(text.slice(0, match.index))) continue;
      blocks.push({ file, line: text.slice(0, match.index).split('\n').length, heading, script: match[2]! });
    }
  }
  return blocks;
}

/** The first shell block under the heading `heading` (a line `## heading` or `### heading`) of any document, as written. */
export async function readmeShellBlock(heading: string): Promise<string> {
  const block = (await readmeShellBlocks()).find((candidate) => candidate.heading === heading);
  if (!block) throw new Error(`no document has a run sh block under "${heading}"`);
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
