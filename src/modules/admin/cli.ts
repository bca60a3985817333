import { readFile } from 'node:fs/promises';
import type { z } from '@hono/zod-openapi';
import type { CliCommand } from '../../bin/cli-types.js';
import { AppError } from '../../errors.js';
import { pageRequest } from '../../lib/paging.js';
import { validate } from '../../http/validation.js';
import { completeTopUpOrder } from '../fulfilment/index.js';
import { stockOf } from '../inventory/service.js';
import { AdjustBalanceBody, CompleteOrderBody, CreateAccountBody, ListOrdersQuery, RefundOrderBody } from './schemas.js';
import { importCodes, listOrders, moveBalance, openAccount, refundForOperator, restockHere } from './service.js';

type Flags = Record<string, string | true>;

/** Runs a task and turns catalogue errors into their client messages, so the CLI says what the API would. */
async function explained<T>(task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (err) {
    if (err instanceof AppError) throw new Error([err.errors].flat().join('\n'));
    throw err;
  }
}

/** The same schemas as the HTTP API; a flag given without a value counts as blank. */
const input = <S extends z.ZodType>(schema: S, flags: Flags, names: Record<string, string> = {}) =>
  explained(async () =>
    validate(schema, Object.fromEntries(Object.entries(flags).map(([k, v]) => [names[k] ?? k, v === true ? '' : v]))),
  );

function positiveArg(value: string | undefined, name: string): number {
  if (!value || !/^\d{1,9}$/.test(value) || Number(value) < 1) throw new Error(`<${name}> must be a positive integer.`);
  return Number(value);
}

function requiredArg(value: string | undefined, name: string): string {
  if (!value) throw new Error(`<${name}> is required.`);
  return value;
}

async function readLines(path: string): Promise<string[]> {
  const text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  return text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Operator commands for accounts, orders, stock and codes (C13). Results are JSON on stdout. */
export const adminCommands: Record<string, CliCommand> = {
  'accounts:create': {
    usage: 'accounts:create --firstname <f> --lastname <l> [--email <e>] [--balance <n>]',
    description: 'Create an account; prints its id and secrets (shown this once)',
    run: async ({ db, config }, _args, flags) => {
      const account = await input(CreateAccountBody, flags);
      return explained(() => openAccount(db, config, account));
    },
  },
  'accounts:balance': {
    usage: 'accounts:balance <accountId> --amount <n> --reason <text>',
    description: 'Credit (or, with a negative amount, debit) an account',
    run: async ({ db }, [id], flags) => {
      const accountId = positiveArg(id, 'accountId');
      const { amount, reason } = await input(AdjustBalanceBody, flags);
      return explained(() => moveBalance(db, accountId, amount, reason));
    },
  },
  'codes:import': {
    usage: 'codes:import <cardServiceId> --file <path|->',
    description: 'Import card codes, one per line (- reads stdin), then fulfil waiting orders',
    run: async ({ db, config }, [id], flags) => {
      const cardServiceId = positiveArg(id, 'cardServiceId');
      if (typeof flags.file !== 'string') throw new Error('--file <path> is required (- reads stdin).');
      const codes = await readLines(flags.file);
      if (codes.length === 0) throw new Error('The file holds no codes.');
      // Restocks in this process, so the import works even where no worker runs.
      return explained(() => importCodes({ db, codeKey: config.codeEncryptionKey, restock: restockHere(db) }, cardServiceId, codes));
    },
  },
  stock: {
    usage: 'stock <cardServiceId>',
    description: 'Available codes and codes owed to stock_short orders',
    run: async ({ db }, [id]) => explained(() => stockOf(db, positiveArg(id, 'cardServiceId'))),
  },
  'orders:list': {
    usage: 'orders:list [--status <label|0-3>] [--page <n>] [--per-page <n>]',
    description: 'Orders of all accounts, newest first',
    run: async ({ db }, _args, flags) => {
      const query = await input(ListOrdersQuery, flags, { 'per-page': 'per_page' });
      const page = pageRequest(query, 10);
      const { data, total } = await listOrders(db, { status: query.status, ...page });
      return { current_page: page.page, per_page: page.perPage, total, data };
    },
  },
  'orders:complete': {
    usage: 'orders:complete <utr> [--note <text>]',
    description: 'Mark a top-up order delivered',
    run: async ({ db }, [utr], flags) => {
      const { note } = await input(CompleteOrderBody, flags);
      return explained(() => completeTopUpOrder(db, requiredArg(utr, 'utr'), note));
    },
  },
  'orders:refund': {
    usage: 'orders:refund <utr> --reason <text>',
    description: 'Refund a non-completed order',
    run: async ({ db }, [utr], flags) => {
      const { reason } = await input(RefundOrderBody, flags);
      return explained(() => refundForOperator(db, requiredArg(utr, 'utr'), reason));
    },
  },
};
