import type { CliCommand } from '../../cli/types.js';
import { openInput, optionsInput, pageOptions } from '../../cli/input.js';
import { pageRequest } from '../../lib/paging.js';
import { validate } from '../../http/validation.js';
import { completeTopUpOrder } from '../fulfilment/index.js';
import { statusObserver } from '../order-state/events.js';
import { codeLines } from '../inventory/code-lines.js';
import { stockOf } from '../inventory/service.js';
import { AccountPatch, AdjustBalanceBody, CompleteOrderBody, CreateAccountBody, ListOrdersQuery, NewKeyBody, RefundOrderBody, TestBalanceBody } from './schemas.js';
import { accountKeysOf, changeAccount, importCodes, issueKey, listOrders, moveBalance, openAccount, refundForOperator, restockHere, setTestBalance, withdrawKey } from './service.js';

const CARD_SERVICE = { name: 'cardServiceId', description: 'id of the card service', kind: 'id' } as const;
const UTR = { name: 'utr', description: 'order number' };
const ACCOUNT = { name: 'accountId', description: 'id of the account', kind: 'id' } as const;

/** Operator commands for accounts, orders, stock and codes (C13). Results are JSON on stdout. */
export const adminCommands: Record<string, CliCommand> = {
  'accounts:create': {
    description: 'Create an account; prints its id and secrets (shown this once)',
    options: [
      { name: 'firstname', value: '<name>', description: 'first name', required: true },
      { name: 'lastname', value: '<name>', description: 'last name', required: true },
      { name: 'email', value: '<email>', description: 'contact address' },
      { name: 'currency', value: '<code>', description: 'the store currency (the default) or one with a rate (store:currencies:set)' },
      { name: 'balance', value: '<amount>', description: 'opening balance (default 0)' },
    ],
    run: async ({ db, config }, _args, options) => openAccount(db, config, optionsInput(CreateAccountBody, options)),
  },
  'accounts:update': {
    description: "Change an account's price tier, its address allow-list, and its currency while its balance is 0 with no order in progress",
    args: [{ name: 'accountId', description: 'id of the account', kind: 'id' }],
    options: [
      { name: 'price-tier-id', value: '<id|none>', description: 'the price tier; none for the catalog price' },
      { name: 'currency', value: '<code>', description: 'a currency the store has a rate for' },
      { name: 'allowed-ips', value: '<list|none>', description: 'comma-separated addresses and CIDR ranges its requests may come from; none allows any' },
    ],
    run: async (services, [id], { 'price-tier-id': tier, currency, 'allowed-ips': ips }) => {
      const input = validate(AccountPatch, {
        currency,
        ...(tier === undefined ? {} : { price_tier_id: tier === 'none' ? null : tier }),
        ...(ips === undefined ? {} : { allowed_ips: ips === 'none' ? [] : String(ips).split(',').map((ip) => ip.trim()) }),
      });
      return changeAccount(services, Number(id), input);
    },
  },
  'keys:create': {
    description: 'Issue a key pair to an account; prints its secret (shown this once)',
    args: [ACCOUNT],
    options: [
      { name: 'mode', value: '<live|test>', description: 'live or test (required)' },
      { name: 'scope', value: '<full|read>', description: 'full (the default), or read: its tokens may only read' },
    ],
    run: async ({ db }, [id], options) => issueKey(db, Number(id), optionsInput(NewKeyBody, options)),
  },
  'keys:list': {
    description: "An account's keys (no secrets), when each was last used and revoked",
    args: [ACCOUNT],
    run: async ({ db }, [id]) => accountKeysOf(db, Number(id)),
  },
  'keys:revoke': {
    description: 'Revoke a key: its tokens stop at once, in every process',
    args: [ACCOUNT, { name: 'publicKey', description: 'the public key to revoke' }],
    run: async (services, [id, publicKey]) => withdrawKey(services, Number(id), publicKey!),
  },
  'accounts:balance': {
    description: 'Credit (or, with a negative amount, debit) an account; never below 0',
    args: [{ name: 'accountId', description: 'id of the account', kind: 'id' }],
    options: [
      { name: 'amount', value: '<amount>', description: 'e.g. 250 or -2.50', required: true },
      { name: 'reason', value: '<text>', description: 'kept in the ledger', required: true },
    ],
    run: async ({ db }, [id], options) => {
      const { amount, reason } = optionsInput(AdjustBalanceBody, options);
      return moveBalance(db, Number(id), amount, reason);
    },
  },
  'accounts:test-balance': {
    description: "Set an account's test balance, the one its test-mode orders are paid from",
    args: [{ name: 'accountId', description: 'id of the account', kind: 'id' }],
    options: [{ name: 'amount', value: '<amount>', description: 'e.g. 1000', required: true }],
    run: async ({ db }, [id], options) => setTestBalance(db, Number(id), optionsInput(TestBalanceBody, options).amount),
  },
  'codes:import': {
    description: 'Import card codes, one per line, then fulfil the waiting stock_short orders (all codes or none)',
    args: [CARD_SERVICE],
    options: [{ name: 'file', value: '<path>', description: 'the codes, one per line; - reads stdin', required: true }],
    run: async ({ db, config, logger, metrics, orderPages }, [id], { file }, io) => {
      // Streamed: only one batch of codes is in memory at a time, whatever the file's size.
      const { input, size, bytesRead } = await openInput(io, 'file', String(file));
      const progress = io.progress(size, ['read', 'added', 'skipped']);
      try {
        // Restocks in this process, so the import works even where no worker runs.
        return await importCodes({ db, codeKey: config.codeEncryptionKey, restock: restockHere(db, statusObserver({ logger, metrics, orderPages })) }, Number(id), codeLines(input), (counts) =>
          progress.update(bytesRead(), counts),
        );
      } finally {
        progress.stop();
      }
    },
  },
  stock: {
    description: 'Available codes and codes owed to stock_short orders',
    args: [CARD_SERVICE],
    run: async ({ db }, [id]) => stockOf(db, Number(id)),
  },
  'orders:list': {
    description: 'Orders of all accounts, newest first',
    options: [
      { name: 'status', value: '<status>', description: 'initiate, completed, refund, stock_short or 0-3' },
      { name: 'mode', value: '<live|test|all>', description: 'live orders (the default), test orders, or both' },
      ...pageOptions('orders', 10),
    ],
    run: async ({ db }, _args, options) => {
      const query = optionsInput(ListOrdersQuery, options);
      const page = pageRequest(query, 10);
      const { data, total } = await listOrders(db, { status: query.status, mode: query.mode, ...page });
      return { current_page: page.page, per_page: page.perPage, total, data };
    },
  },
  'orders:complete': {
    description: 'Mark a top-up order delivered',
    args: [UTR],
    options: [{ name: 'note', value: '<text>', description: 'shown to the customer' }],
    run: async ({ db, logger, metrics, orderPages }, [utr], options) =>
      completeTopUpOrder(db, utr!, optionsInput(CompleteOrderBody, options).note, statusObserver({ logger, metrics, orderPages })),
  },
  'orders:refund': {
    description: 'Refund an order that is not completed',
    args: [UTR],
    options: [{ name: 'reason', value: '<text>', description: 'kept with the refund', required: true }],
    run: async ({ db, logger, metrics, orderPages }, [utr], options) =>
      refundForOperator(db, utr!, optionsInput(RefundOrderBody, options).reason, statusObserver({ logger, metrics, orderPages })),
  },
};
