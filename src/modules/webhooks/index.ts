/** What the worker processes use of the webhooks module. */
export { attemptDelivery, dueDeliveries, type DeliveryDeps } from './delivery.js';
