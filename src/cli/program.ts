import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { MultiBar, Presets } from 'cli-progress';
import type { Readable } from 'node:stream';
import { AppError } from '../core/errors.js';
import { MAX_ID } from '../http/validation.js';
import type { LogDestination } from '../lib/logger.js';
import type { Services } from '../runtime/services.js';
import type { CliCommand, CliIo } from './types.js';

/**
 * Where a run of the CLI reads and writes: the process's own streams for `npm run cli`, captured ones when a
 * program (a test) runs a command inside itself. Nothing here exits the process: the run answers its exit code.
 */
export type CliHost = {
  /** Settles (when it returns a promise) once more may be written: an export waits for a slow reader. */
  stdout: (text: string) => unknown;
  stderr: (text: string) => void;
  /** What `-` reads (`--file -`, `--credentials-file -`). */
  stdin: Readable;
  /** The terminal stderr is, where a progress bar may be drawn; absent when stderr is a pipe or a file. */
  terminal?: NodeJS.WritableStream;
  /**
   * The service's connections, its log lines written to `logs`. A start that fails rejects with the one line the
   * operator is told.
   */
  start: (logs: LogDestination) => Promise<Services>;
};

const USAGE_ERROR = 2;
const FAILED = 1;

/** An `id` argument: a positive integer that fits an id column (C2 ranges). */
function id(value: string): string {
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > MAX_ID) throw new InvalidArgumentError(`It must be an id from 1 to ${MAX_ID}.`);
  return value;
}

/** What a failed operation tells the operator: the API's messages for catalogue errors, one per line. */
const failureMessage = (err: unknown) =>
  err instanceof AppError ? [err.errors].flat().join('\n') : err instanceof Error ? err.message : String(err);

/**
 * The progress bar and the log lines of one run: log lines written while a bar is drawn go above it (a line
 * written into the bar would break it), otherwise to stderr. A bar is drawn only on a terminal, so logs and
 * scripts stay clean.
 */
function terminalIo(host: CliHost): { io: CliIo; logs: LogDestination } {
  let shownBar: MultiBar | null = null;
  const logs: LogDestination = { write: (line) => (shownBar ? shownBar.log(line) : host.stderr(line)) };
  const io: CliIo = {
    stdin: host.stdin,
    write: async (text) => void (await host.stdout(text)),
    progress: (total, counts) => {
      if (!host.terminal) return { update: () => {}, stop: () => {} };
      const tally = counts.map((name) => `${name} {${name}}`).join(' | ');
      // Redrawn on every frame, changed or not: a log line shown above it takes the line the bar was on.
      const bars = new MultiBar(
        { stream: host.terminal, format: total > 0 ? `{bar} {percentage}% | ${tally}` : tally, hideCursor: true, forceRedraw: true },
        Presets.shades_classic,
      );
      const bar = bars.create(total, 0, Object.fromEntries(counts.map((name) => [name, 0])));
      shownBar = bars;
      return {
        update: (done, values) => bar.update(Math.min(done, total), values),
        stop: () => {
          // Drawn once more first, which shows the log lines still waiting.
          bars.update();
          bars.stop();
          shownBar = null;
        },
      };
    },
  };
  return { io, logs };
}

/** Runs one command against the service's connections, closed afterwards; its result is JSON on stdout. */
async function execute(host: CliHost, command: CliCommand, args: string[], options: Record<string, string | true>): Promise<number> {
  const { io, logs } = terminalIo(host);
  let services: Services;
  try {
    services = await host.start(logs);
  } catch (err) {
    host.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
    return FAILED;
  }
  try {
    const result = await command.run(services, args, options, io);
    if (result !== undefined) host.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    host.stderr(`${failureMessage(err)}\n`);
    return FAILED;
  } finally {
    await services.close();
  }
}

/**
 * `npm run cli -- <command> [args] [--option value]`: operator tasks. Results are JSON on stdout, messages on
 * stderr. Exit codes: 0 success, 1 the operation failed, 2 a usage error (unknown command or option, a missing
 * argument or required option), answered before any connection is made.
 */
export async function runCli(commands: Record<string, CliCommand>, argv: string[], host: CliHost): Promise<number> {
  let exitCode = 0;
  const program = new Command('npm run cli --')
    .usage('<command> [arguments] [options]')
    .description('Operator tasks on the database and queues of the store. Results are JSON on stdout.')
    .addHelpText('after', '\nExit codes: 0 success, 1 the operation failed (message on stderr), 2 usage error.')
    // Settings the commands below inherit: strict parsing, and usage errors as one line pointing to the help.
    .exitOverride()
    .allowExcessArguments(false)
    .configureOutput({
      writeOut: host.stdout,
      writeErr: host.stderr,
      outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')} (see --help)\n`),
    });

  for (const [name, command] of Object.entries(commands)) {
    const cli = program.command(name).description(command.description);
    for (const arg of command.args ?? []) {
      const argument = new Argument(`<${arg.name}>`, arg.description);
      cli.addArgument(arg.kind === 'id' ? argument.argParser(id) : argument);
    }
    const declared = (command.options ?? []).map((spec) => {
      const option = new Option(`--${spec.name}${spec.value ? ` ${spec.value}` : ''}`, `${spec.description}${spec.required ? ' (required)' : ''}`);
      cli.addOption(spec.required ? option.makeOptionMandatory() : option);
      return { name: spec.name, key: option.attributeName() };
    });
    cli.action(async (...params: unknown[]) => {
      const parsed = params.at(-1) as Command;
      const given = parsed.opts<Record<string, string | true | undefined>>();
      const options = Object.fromEntries(declared.flatMap(({ name, key }) => (given[key] === undefined ? [] : [[name, given[key]]])));
      exitCode = await execute(host, command, parsed.args, options);
    });
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help asked for exits 0; help shown because no command was given, and every parse error, is a usage error.
    return err.exitCode === 0 ? 0 : USAGE_ERROR;
  }
}
