import type { CliCommand } from '../../cli/types.js';
import { optionsInput, pageOptions } from '../../cli/input.js';
import { pageRequest } from '../../lib/paging.js';
import { existingAccount } from '../accounts/service.js';
import { listDeliveries, retryDelivery } from './deliveries.js';
import { listEndpoints, liveEndpointsOf, registerEndpoint } from './endpoints.js';
import { presentEndpoint } from './presenters.js';
import { ListDeliveriesQuery, RegisterEndpointBody } from './schemas.js';

const ACCOUNT = { name: 'accountId', description: 'id of the account', kind: 'id' } as const;

/** Operator commands for webhook endpoints and deliveries (C17): the admin API's, from a shell. */
export const webhookCommands: Record<string, CliCommand> = {
  'webhooks:add': {
    description: "Register a webhook endpoint for an account; prints it with its secret (shown this once)",
    args: [ACCOUNT],
    options: [
      { name: 'url', value: '<url>', description: 'https URL that receives the events', required: true },
      { name: 'events', value: '<types>', description: 'comma-separated event types (default: all)' },
    ],
    run: async ({ db, config }, [id], options) => {
      const accountId = await existingAccount(db, Number(id));
      const input = optionsInput(RegisterEndpointBody, options, ['events']);
      const { secret, ...created } = await registerEndpoint(
        { db, codeKey: config.codeEncryptionKey, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE },
        liveEndpointsOf(accountId),
        input,
      );
      return { ...presentEndpoint(created), secret };
    },
  },
  'webhooks:list': {
    description: "An account's webhook endpoints",
    args: [ACCOUNT],
    run: async ({ db }, [id]) => (await listEndpoints(db, liveEndpointsOf(await existingAccount(db, Number(id))))).map(presentEndpoint),
  },
  'webhooks:deliveries': {
    description: 'Webhook deliveries of every account, newest first',
    options: [
      { name: 'status', value: '<status>', description: 'pending, delivered, failed or skipped' },
      ...pageOptions('deliveries', 20),
    ],
    run: async ({ db }, _args, options) => {
      const query = optionsInput(ListDeliveriesQuery, options);
      return listDeliveries(db, { status: query.status, ...pageRequest(query, 20) });
    },
  },
  'webhooks:retry': {
    description: 'Send a webhook delivery once more, now',
    args: [{ name: 'deliveryId', description: 'id of the delivery', kind: 'id' }],
    run: async ({ db }, [id]) => retryDelivery(db, Number(id)),
  },
};
