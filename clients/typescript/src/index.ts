export { createStoreClient, utrOfTopUpOrder, type Answer, type StoreClient, type StoreClientOptions } from './client.js';
export { isStoreError, StoreError, type StoreErrorKind } from './errors.js';
export type { RetryOptions } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookHeaders } from './webhooks.js';
export type { components, operations, paths, webhooks } from './openapi.js';

import type { components } from './openapi.js';

/** The document's named schemas: `Schemas['CardOrder']`, `Schemas['StatementEntry']`, … */
export type Schemas = components['schemas'];
export type Order = Schemas['Order'];
export type CardOrder = Schemas['CardOrder'];
export type TopUpOrder = Schemas['TopUpOrder'];
export type OrderEvent = Schemas['OrderEvent'];
