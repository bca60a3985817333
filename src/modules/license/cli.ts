import type { CliCommand } from '../../bin/cli-types.js';
import { AppError } from '../../errors.js';
import { validate } from '../../http/validation.js';
import { rotateApiKey } from '../accounts/service.js';
import { createItemBody, createPurchaseBody } from './schemas.js';
import { issueItem, issuePurchase } from './service.js';

const LIST_FLAGS = new Set(['options', 'tags', 'screenshots']);

/** `--sub-category x` → `{sub_category: 'x'}`; list flags are comma-separated; `--downloaded` alone is true. */
function flagsToInput(flags: Record<string, string | true>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(flags)) {
    const key = flag.replace(/-/g, '_');
    if (value === true) input[key] = true;
    else if (LIST_FLAGS.has(key)) input[key] = value.split(',').map((part) => part.trim()).filter(Boolean);
    else if (key === 'downloaded') input[key] = value === 'true';
    else input[key] = value;
  }
  return input;
}

/** Validation failures read as one line per field on stderr. */
async function asCliErrors<T>(task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (err) {
    if (err instanceof AppError) throw new Error([err.errors].flat().join('\n'));
    throw err;
  }
}

/** Operator commands for license items, purchases and api keys. */
export const licenseCommands: Record<string, CliCommand> = {
  'license:item:create': {
    usage: 'license:item:create --account-id N --name X --category X --version 1.0 --media-kind image|audio|video --thumbnail PATH --preview-image|--preview-audio|--preview-video PATH --price-regular N --price-extended N [--description X --sub-category X --options a,b --tags a,b --screenshots a,b --demo-link URL --currency XXX]',
    description: 'Create a license item for an account',
    run: ({ db, config }, _args, flags) =>
      asCliErrors(() => issueItem(db, config.STORE_CURRENCY, validate(createItemBody, flagsToInput(flags)))),
  },
  'license:purchase:create': {
    usage: 'license:purchase:create --item-id N [--purchase-code X --license-type X --price N --supported-until ISO --downloaded]',
    description: 'Record a purchase of a license item; prints its purchase code once',
    run: ({ db, config }, _args, flags) =>
      asCliErrors(() => issuePurchase(db, config.codeEncryptionKey, validate(createPurchaseBody, flagsToInput(flags)))),
  },
  'license:api-key:rotate': {
    usage: 'license:api-key:rotate <account id>',
    description: "Issue a new api key for an account (the old one stops working); prints it once",
    run: async ({ db }, [id]) => {
      const accountId = Number(id);
      if (!Number.isInteger(accountId) || accountId <= 0) throw new Error('Usage: license:api-key:rotate <account id>');
      const apiKey = await rotateApiKey(db, accountId);
      if (!apiKey) throw new Error(`Account ${accountId} not found.`);
      return { id: accountId, apiKey };
    },
  },
};
