import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { runCli as runProgram } from '../../src/cli/program.js';
import { operatorCommands } from '../../src/commands.js';
import { startForCommand } from '../../src/startup/index.js';
import type { TestApp } from './harness.js';
import { runEntry } from './processes.js';

export type CliRun = { code: number | null; stdout: string; stderr: string };

/**
 * `npm run cli -- …` inside the test's process: the same program, commands and start as the entry point, with
 * `env` as its environment (see cliEnvOf) and `stdin` as what `-` reads. Loading the service once per file instead
 * of once per command keeps a CLI test as fast as an API test; `runCliProcess` checks the process itself.
 */
export async function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runProgram(operatorCommands, args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdin: Readable.from([Buffer.from(stdin)]),
    start: (logs) => startForCommand(logs, env),
  });
  return { code, stdout, stderr };
}

/** `npm run cli -- …` as an operator runs it: a process of its own (exit codes, output streams), `stdin` if given. */
export async function runCliProcess(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  const run = runEntry('src/bin/cli.ts', env, { args, stdin });
  const { code } = await run.exit;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** The environment that points the CLI at a test app's database, Redis and code key. */
export function cliEnvOf(app: TestApp, extra: Record<string, string> = {}): Record<string, string> {
  const { config } = app.services;
  return {
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    BULLMQ_PREFIX: config.BULLMQ_PREFIX,
    CODE_ENCRYPTION_KEY: config.codeEncryptionKey.toString('hex'),
    ...(config.METRICS_TOKEN ? { METRICS_TOKEN: config.METRICS_TOKEN } : {}),
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** The JSON a command printed, after checking it succeeded. */
export function cliJson(run: CliRun): Record<string, any> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, any>;
}
