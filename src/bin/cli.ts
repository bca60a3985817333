import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { MultiBar, Presets } from 'cli-progress';
import { bootstrap, startOrExit } from '../startup/index.js';
import { AppError } from '../core/errors.js';
import { MAX_ID } from '../http/validation.js';
import type { LogDestination } from '../lib/logger.js';
import { adminCommands } from '../modules/admin/cli.js';
import { licenseCommands } from '../modules/license/cli.js';
import { providerCommands } from '../modules/providers/cli.js';
import { catalogAdminCommands } from '../modules/catalog-admin/cli.js';
import { webhookCommands } from '../modules/webhooks/cli.js';
import type { CliCommand, CliIo } from '../cli/types.js';

/**
 * `npm run cli -- <command> [args] [--option value]`: operator tasks. Results are JSON on stdout, messages on
 * stderr. Exit codes: 0 success, 1 the operation failed, 2 a usage error (unknown command or option, a missing
 * argument or required option), answered before any connection is made.
 */
const commands: Record<string, CliCommand> = {
  ...adminCommands,
  ...licenseCommands,
  ...providerCommands,
  ...catalogAdminCommands,
  ...webhookCommands,
};

const USAGE_ERROR = 2;

/** An `id` argument: a positive integer that fits an id column (C2 ranges). */
function id(value: string): string {
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > MAX_ID) throw new InvalidArgumentError(`It must be an id from 1 to ${MAX_ID}.`);
  return value;
}

/** The progress bar on the terminal, while one is drawn. */
let shownBar: MultiBar | null = null;

/** Log lines written while a bar is drawn go above it (a line written into the bar would break it), then on stderr. */
const logLines: LogDestination = { write: (line) => (shownBar ? shownBar.log(line) : process.stderr.write(line)) };

/** A bar on a terminal's stderr; nothing when stderr is a pipe or a file, so logs and scripts stay clean. */
const io: CliIo = {
  progress: (total, counts) => {
    if (!process.stderr.isTTY) return { update: () => {}, stop: () => {} };
    const tally = counts.map((name) => `${name} {${name}}`).join(' | ');
    // Redrawn on every frame, changed or not: a log line shown above it takes the line the bar was on.
    const bars = new MultiBar(
      { stream: process.stderr, format: total > 0 ? `{bar} {percentage}% | ${tally}` : tally, hideCursor: true, forceRedraw: true },
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

/** What a failed operation tells the operator: the API's messages for catalogue errors, one per line. */
const failureMessage = (err: unknown) =>
  err instanceof AppError ? [err.errors].flat().join('\n') : err instanceof Error ? err.message : String(err);

async function execute(command: CliCommand, args: string[], options: Record<string, string | true>): Promise<void> {
  // An operator wants the command's answer and what went wrong, not the info lines of the services it calls;
  // LOG_LEVEL, when set, still decides.
  process.env.LOG_LEVEL ||= 'warn';
  // Operator commands use the database as it is: never created or migrated from here.
  const services = await startOrExit(() => bootstrap({ prepareDatabase: false, logDestination: logLines }));
  try {
    const result = await command.run(services, args, options, io);
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (err) {
    process.stderr.write(`${failureMessage(err)}\n`);
    process.exitCode = 1;
  } finally {
    await services.close();
  }
}

const program = new Command('npm run cli --')
  .usage('<command> [arguments] [options]')
  .description('Operator tasks on the database and queues of the store. Results are JSON on stdout.')
  .addHelpText('after', '\nExit codes: 0 success, 1 the operation failed (message on stderr), 2 usage error.')
  // Settings the commands below inherit: strict parsing, and usage errors as one line pointing to the help.
  .exitOverride()
  .allowExcessArguments(false)
  .configureOutput({
    writeOut: (text) => process.stdout.write(text),
    writeErr: (text) => process.stderr.write(text),
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
    await execute(command, parsed.args, options);
  });
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // Help asked for exits 0; help shown because no command was given, and every parse error, is a usage error.
  process.exitCode = err.exitCode === 0 ? 0 : USAGE_ERROR;
}
