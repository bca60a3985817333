import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Debian tools some suites run for real, with the package that provides each. */
const TOOLS = {
  chromium: { command: '/usr/bin/chromium', debian: 'chromium' },
  haproxy: { command: 'haproxy', debian: 'haproxy' },
  pgbouncer: { command: 'pgbouncer', debian: 'pgbouncer' },
  promtool: { command: '/usr/bin/promtool', debian: 'prometheus' },
  'redis-server': { command: 'redis-server', debian: 'redis-server' },
  initdb: { command: '/usr/lib/postgresql/15/bin/initdb', debian: 'postgresql-15' },
} as const;
export type Tool = keyof typeof TOOLS;

/** How a test runs `tool`: its path, or its name to look up on PATH. */
export const toolCommand = (tool: Tool): string => TOOLS[tool].command;

const SEARCH_PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];

function installed(command: string): boolean {
  const candidates = command.startsWith('/') ? [command] : SEARCH_PATH.map((dir) => join(dir, command));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * A vitest globalSetup for a suite that needs `tools`: when one is missing, the run stops before any test with one
 * line naming what is missing and how to install it, instead of a spawn error and a time-out per test.
 */
export function requireTools(suite: string, tools: Tool[]) {
  return () => {
    const missing = tools.filter((tool) => !installed(TOOLS[tool].command));
    if (missing.length === 0) return;
    const packages = [...new Set(missing.map((tool) => TOOLS[tool].debian))].join(' ');
    process.stderr.write(`${suite} needs ${missing.join(', ')}, missing here: install with \`apt-get install ${packages}\`\n`);
    process.exit(1);
  };
}
