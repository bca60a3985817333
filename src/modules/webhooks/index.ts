/** What the worker processes use of the webhooks module. */
export { attemptRecorder, deliverBatch, dueDeliveries, type DeliveryDeps, type DueHandOff } from './delivery.js';
export { createWebhookSender, type WebhookSender } from './destinations.js';
