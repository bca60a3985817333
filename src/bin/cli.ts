import { runCli } from '../cli/program.js';
import { operatorCommands } from '../commands.js';
import { startForCommand } from '../startup/index.js';

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
  start: (logs) => startForCommand(logs, process.env),
});
