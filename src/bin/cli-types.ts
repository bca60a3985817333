import type { Services } from '../services.js';

/**
 * One CLI command. `args` are the words after the command name; `--flag value` pairs are in `flags`.
 * Print results with `print` (JSON on stdout); throw an Error with a clear message to fail.
 */
export type CliCommand = {
  usage: string;
  description: string;
  run: (services: Services, args: string[], flags: Record<string, string | true>) => Promise<unknown>;
};
