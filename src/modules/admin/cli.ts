import type { CliCommand } from '../../bin/cli-types.js';

/** Operator commands for accounts, orders, stock and codes (C13). */
export const adminCommands: Record<string, CliCommand> = {};
