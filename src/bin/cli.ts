import { runCli } from '../cli/program.js';
import { operatorCommands } from '../commands.js';
import { bootstrap, startFailureLine } from '../startup/index.js';

// An operator wants the command's answer and what went wrong, not the info lines of the services it calls;
// LOG_LEVEL, when set, still decides. Operator commands use the database as it is: never created or migrated.
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' };

// A reader that goes away (`… --csv | head`) ends the command quietly, as any Unix tool does.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await runCli(operatorCommands, process.argv.slice(2), {
  stdout: (text) =>
    new Promise<void>((resolve) => {
      if (process.stdout.write(text)) return resolve();
      process.stdout.once('drain', resolve);
      process.stdout.once('close', resolve);
    }),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
  terminal: process.stderr.isTTY ? process.stderr : undefined,
  start: (logs) =>
    bootstrap({ prepareDatabase: false, logDestination: logs, env }).catch((err: unknown) => {
      throw new Error(startFailureLine(err));
    }),
});
