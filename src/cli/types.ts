import type { Readable } from 'node:stream';
import type { Services } from '../runtime/services.js';

/**
 * A positional argument: every declared one is required, in the order declared. An `id` must be a positive
 * integer, or the command is a usage error.
 */
export type CliArg = { name: string; description: string; kind?: 'id' };

/**
 * A `--name` option. With `value` (e.g. `'<amount>'`) it takes one; without, it is a flag that is either given
 * (`true`) or absent. A `required` option missing is a usage error, answered before any connection is made.
 */
export type CliOption = { name: string; value?: string; description: string; required?: boolean };

/** How a long task tells the operator where it is: a bar on a terminal's stderr, nothing otherwise. */
export type CliProgress = {
  /** `done` of `total` units (bytes read, say), and the counts shown next to the bar. */
  update: (done: number, counts: Record<string, number>) => void;
  stop: () => void;
};

export type CliIo = {
  /** What `-` reads in place of a file. */
  stdin: Readable;
  /** Writes text to stdout as it comes (an export), settled once it may write more; such a command returns nothing. */
  write: (text: string) => Promise<void>;
  /** Opens a progress display over `total` units (unknown: 0), showing `counts` by name. */
  progress: (total: number, counts: string[]) => CliProgress;
};

/**
 * One CLI command, declared so the parser can check it strictly and print its help. `args` are the declared
 * positionals in order; `options` the given options by declared name (`per-page`, not `perPage`).
 * The result is printed as JSON on stdout; throw to fail (exit 1, the message on stderr).
 */
export type CliCommand = {
  description: string;
  args?: CliArg[];
  options?: CliOption[];
  run: (services: Services, args: string[], options: Record<string, string | true>, io: CliIo) => Promise<unknown>;
};
