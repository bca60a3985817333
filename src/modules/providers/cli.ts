import type { CliArg, CliCommand, CliIo, CliOption } from '../../cli/types.js';
import { jsonBody, optionsInput, readAll } from '../../cli/input.js';
import { validate } from '../../http/validation.js';
import { PROVIDER_KIND_NAMES } from '../suppliers/registry.js';
import { scheduleRoutingStep } from '../../queues/index.js';
import { settleAttemptForOperator } from '../fulfilment/index.js';
import { statusObserver } from '../order-state/events.js';
import { MarginQuery, ProviderBody, ProviderPatch, RoutesBody, SettleAttemptBody } from './schemas.js';
import { createProvider, listProviders, marginReport, routesOf, setRoutes, showOrder, updateProvider } from './service.js';

/** JSON text as a value; text that is not JSON stays as it is, for the schema to refuse with the API's message. */
function parsedOrAsIs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A provider's options as the API's body: `--credentials <json>` (or `--credentials-file <path>`, kept out of the
 * shell's history and the process list) becomes the credentials object, `--timeout-ms 5000` a number; every other
 * option is the field of its name. The schema then checks it all, with the API's messages.
 */
async function providerOptions(options: Record<string, string | true>, io: CliIo): Promise<Record<string, string | true>> {
  const { credentials, 'credentials-file': file, 'timeout-ms': timeout, 'clear-balance-low-threshold': clearThreshold, ...rest } = options;
  if (credentials !== undefined && file !== undefined) throw new Error('Give the credentials with either --credentials <json> or --credentials-file <path>, not both.');
  if (clearThreshold !== undefined && rest['balance-low-threshold'] !== undefined) {
    throw new Error('Give either --balance-low-threshold <amount> or --clear-balance-low-threshold, not both.');
  }
  const given = file !== undefined ? await readAll(io, 'credentials-file', String(file)) : credentials;
  const input: Record<string, unknown> = {
    ...rest,
    ...(given === undefined ? {} : { credentials: typeof given === 'string' ? parsedOrAsIs(given) : given }),
    ...(timeout === undefined ? {} : { 'timeout-ms': typeof timeout === 'string' && /^\s*\d+\s*$/.test(timeout) ? Number(timeout) : timeout }),
    // The API's null: the provider is no longer watched for a low balance.
    ...(clearThreshold === undefined ? {} : { 'balance-low-threshold': null }),
  };
  // Values other than strings pass through optionsInput untouched, to the schema.
  return input as Record<string, string | true>;
}

const PROVIDER = { name: 'providerId', description: 'id of the provider', kind: 'id' } as const satisfies CliArg;
const UTR = { name: 'utr', description: 'order number' } as const satisfies CliArg;
const TOP_UP_SERVICE = { name: 'topUpServiceId', description: 'id of the top-up service', kind: 'id' } as const satisfies CliArg;

/** The provider's fields, required or not (a change takes any of them; the protocol never changes). */
const providerFields = (create: boolean): CliOption[] => [
  { name: 'name', value: '<name>', description: 'unique name (case-insensitive)', required: create },
  ...(create ? [{ name: 'kind', value: '<kind>', description: `protocol: ${PROVIDER_KIND_NAMES.join(' or ')}`, required: true }] : []),
  { name: 'base-url', value: '<url>', description: 'http(s) address of the provider', required: create },
  { name: 'credentials', value: '<json>', description: `a JSON object${create ? '' : ' replacing the stored one whole'} (http: secret; digiflazz: username, api_key, webhook_secret)` },
  { name: 'credentials-file', value: '<path>', description: 'a file holding the credentials JSON (- reads stdin)' },
  { name: 'timeout-ms', value: '<ms>', description: 'time allowed for each request (100 to 120000, default 10000)' },
  { name: 'status', value: '<status>', description: 'active or disabled' },
  { name: 'balance-low-threshold', value: '<amount>', description: 'provider.balance_low is sent when the balance falls below it' },
  ...(create ? [] : [{ name: 'clear-balance-low-threshold', description: 'removes the threshold: no provider.balance_low any more' }]),
];

/** Top-up suppliers for operators (C22): the admin API's provider endpoints, one command each. Credentials are never printed. */
export const providerCommands: Record<string, CliCommand> = {
  'providers:add': {
    description: 'Add a top-up provider; its credentials are sealed and never shown again',
    options: providerFields(true),
    run: async ({ db, config }, _args, options, io) => {
      return createProvider(db, config.codeEncryptionKey, optionsInput(ProviderBody, await providerOptions(options, io)));
    },
  },
  'providers:update': {
    description: 'Change a provider: the options given (credentials given replace the stored ones)',
    args: [PROVIDER],
    options: providerFields(false),
    run: async ({ db, config }, [id], options, io) =>
      updateProvider(db, config.codeEncryptionKey, Number(id), optionsInput(ProviderPatch, await providerOptions(options, io))),
  },
  'providers:list': {
    description: 'Providers with their circuit state, last error and last known balance',
    run: async ({ db }) => listProviders(db),
  },
  'providers:routes': {
    description: "A top-up service's provider routes; with --json or --file, replaces them (in priority order, [] = by hand)",
    args: [TOP_UP_SERVICE],
    options: [
      { name: 'json', value: '<routes>', description: 'the routes as the admin API takes them: [{"provider_id":1,"product_code":"X","cost":"4.00"}]' },
      { name: 'file', value: '<path>', description: 'a file holding the routes (- reads stdin)' },
    ],
    run: async ({ db }, [id], { json, file }, io) => {
      if (json === undefined && file === undefined) return routesOf(db, Number(id));
      if (json !== undefined && file !== undefined) throw new Error('Give the routes with either --json <routes> or --file <path>, not both.');
      return setRoutes(db, Number(id), validate(RoutesBody, jsonBody(typeof json === 'string' ? json : await readAll(io, 'file', String(file)), 'list')));
    },
  },
  'orders:show': {
    description: 'One order of any account, with every provider attempt',
    args: [UTR],
    run: async ({ db }, [utr]) => showOrder(db, utr!),
  },
  'orders:settle': {
    description: "Settle a top-up's open provider attempt with what the provider said: completed, or refused (the order goes to its next route)",
    args: [UTR, { name: 'attemptId', description: 'id of the open attempt (orders:show lists them)', kind: 'id' }],
    options: [
      { name: 'outcome', value: '<outcome>', description: 'completed (delivered) or refused (nothing delivered, nothing ever will be)', required: true },
      { name: 'reason', value: '<text>', description: 'how the provider said so; kept with the attempt', required: true },
    ],
    run: async ({ db, queues, logger, metrics, orderPages }, [utr, id], options) =>
      settleAttemptForOperator(
        { db, observe: statusObserver({ logger, metrics, orderPages }), scheduleStep: scheduleRoutingStep(queues) },
        utr!,
        Number(id),
        optionsInput(SettleAttemptBody, options),
      ),
  },
  'reports:margin': {
    description: 'Sales, cost and margin of the top-ups delivered between two dates, per provider and service',
    options: [
      { name: 'from', value: '<date>', description: 'start (inclusive), ISO 8601', required: true },
      { name: 'to', value: '<date>', description: 'end (exclusive), ISO 8601', required: true },
    ],
    run: async ({ db, config }, _args, options) => {
      const { from, to } = optionsInput(MarginQuery, options);
      return marginReport(db, config, from, to);
    },
  },
};
