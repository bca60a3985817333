import type { CliCommand } from '../../cli/types.js';
import { optionsInput } from '../../cli/input.js';
import { rotateApiKey } from '../accounts/service.js';
import { createItemBody, createPurchaseBody } from './schemas.js';
import { issueItem, issuePurchase } from './service.js';

/** Options given as comma-separated lists. */
const LISTS = ['options', 'tags', 'screenshots'];

/** Operator commands for license items, purchases and api keys. */
export const licenseCommands: Record<string, CliCommand> = {
  'license:item:create': {
    description: 'Create a license item for an account',
    options: [
      { name: 'account-id', value: '<id>', description: 'the seller account', required: true },
      { name: 'name', value: '<text>', description: 'item name', required: true },
      { name: 'category', value: '<text>', description: 'category', required: true },
      { name: 'version', value: '<x.y>', description: 'dotted version number', required: true },
      { name: 'media-kind', value: '<kind>', description: 'image, audio or video', required: true },
      { name: 'thumbnail', value: '<path>', description: 'thumbnail image', required: true },
      { name: 'preview-image', value: '<path>', description: 'preview of an image item' },
      { name: 'preview-audio', value: '<path>', description: 'preview of an audio item' },
      { name: 'preview-video', value: '<path>', description: 'preview of a video item' },
      { name: 'price-regular', value: '<amount>', description: 'regular license price', required: true },
      { name: 'price-extended', value: '<amount>', description: 'extended license price', required: true },
      { name: 'description', value: '<text>', description: 'description' },
      { name: 'sub-category', value: '<text>', description: 'sub-category' },
      { name: 'options', value: '<a,b>', description: 'comma-separated options' },
      { name: 'tags', value: '<a,b>', description: 'comma-separated tags' },
      { name: 'screenshots', value: '<a,b>', description: 'comma-separated screenshot paths' },
      { name: 'demo-link', value: '<url>', description: 'demo URL' },
      { name: 'currency', value: '<code>', description: 'price currency (default the store currency)' },
      { name: 'published-at', value: '<iso>', description: 'publication time (ISO 8601)' },
    ],
    run: async ({ db, config }, _args, options) => issueItem(db, config.STORE_CURRENCY, optionsInput(createItemBody, options, LISTS)),
  },
  'license:purchase:create': {
    description: 'Record a purchase of a license item; prints its purchase code once',
    options: [
      { name: 'item-id', value: '<id>', description: 'the item bought', required: true },
      { name: 'purchase-code', value: '<code>', description: 'the code to issue (default: generated)' },
      { name: 'license-type', value: '<text>', description: 'license type' },
      { name: 'price', value: '<amount>', description: 'price paid' },
      { name: 'supported-until', value: '<iso>', description: 'end of support (ISO 8601)' },
      { name: 'downloaded', description: 'the item was downloaded already' },
    ],
    run: async ({ db, config }, _args, options) => issuePurchase(db, config.codeEncryptionKey, optionsInput(createPurchaseBody, options)),
  },
  'license:api-key:rotate': {
    description: 'Issue a new api key for an account (the old one stops working); prints it once',
    args: [{ name: 'accountId', description: 'id of the account', kind: 'id' }],
    run: async ({ db }, [id]) => {
      const accountId = Number(id);
      const apiKey = await rotateApiKey(db, accountId);
      if (!apiKey) throw new Error(`Account ${accountId} not found.`);
      return { id: accountId, apiKey };
    },
  },
};
