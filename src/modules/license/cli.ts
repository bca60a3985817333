import type { CliCommand } from '../../bin/cli-types.js';

/** Operator commands for license items, purchases and api keys. */
export const licenseCommands: Record<string, CliCommand> = {};
