import { runCli } from '../cli/program.js';
import { operatorCommands } from '../commands.js';
import { bootstrap, startFailureLine } from '../startup/index.js';

// An operator wants the command's answer and what went wrong, not the info lines of the services it calls;
// LOG_LEVEL, when set, still decides. Operator commands use the database as it is: never created or migrated.
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' };

process.exitCode = await runCli(operatorCommands, process.argv.slice(2), {
  stdout: (text) => new Promise<void>((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once('drain', resolve))),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
  terminal: process.stderr.isTTY ? process.stderr : undefined,
  start: (logs) =>
    bootstrap({ prepareDatabase: false, logDestination: logs, env }).catch((err: unknown) => {
      throw new Error(startFailureLine(err));
    }),
});
