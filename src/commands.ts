import { adminCommands } from './modules/admin/cli.js';
import { licenseCommands } from './modules/license/cli.js';
import { providerCommands } from './modules/providers/cli.js';
import { catalogAdminCommands } from './modules/catalog-admin/cli.js';
import { webhookCommands } from './modules/webhooks/cli.js';
import { statementCommands } from './modules/statements/cli.js';
import type { CliCommand } from './cli/types.js';

/** Every operator command of `npm run cli`, by name: what `app.ts` is to the API's routes. */
export const operatorCommands: Record<string, CliCommand> = {
  ...adminCommands,
  ...licenseCommands,
  ...providerCommands,
  ...catalogAdminCommands,
  ...webhookCommands,
  ...statementCommands,
};
