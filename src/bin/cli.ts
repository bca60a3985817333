import { bootstrap, startOrExit } from '../bootstrap.js';
import { adminCommands } from '../modules/admin/cli.js';
import { licenseCommands } from '../modules/license/cli.js';
import type { CliCommand } from './cli-types.js';

/** `npm run cli -- <command> [args] [--flag value]`: operator tasks; results as JSON on stdout. */
const commands: Record<string, CliCommand> = { ...adminCommands, ...licenseCommands };

function parseArgs(argv: string[]) {
  const args: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (!word.startsWith('--')) {
      args.push(word);
      continue;
    }
    const [name, inline] = word.slice(2).split('=', 2) as [string, string | undefined];
    const next = argv[i + 1];
    if (inline !== undefined) flags[name] = inline;
    else if (next !== undefined && !next.startsWith('--')) flags[name] = argv[++i]!;
    else flags[name] = true;
  }
  return { args, flags };
}

function usage(): string {
  const lines = Object.values(commands).map((c) => `  ${c.usage.padEnd(58)} ${c.description}`);
  return `Usage: npm run cli -- <command> [options]\n\nCommands:\n${lines.join('\n')}\n`;
}

const [name, ...rest] = process.argv.slice(2);
const command = name ? commands[name] : undefined;
if (!command) {
  process.stderr.write(name && name !== 'help' ? `Unknown command: ${name}\n\n${usage()}` : usage());
  process.exit(name && name !== 'help' ? 2 : 0);
}
// Operator commands use the database as it is: never created or migrated from here.
const services = await startOrExit(() => bootstrap({ prepareDatabase: false }));
try {
  const { args, flags } = parseArgs(rest);
  const result = await command.run(services, args, flags);
  if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await services.close();
}
