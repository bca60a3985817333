/**
 * Top-up suppliers, as the workers see them (C22): the routing of an order, the circuits of the providers, their
 * balances, and what the reconciler needs to find a routing step whose job Redis lost.
 */
export { checkBalances } from './balances.js';
export { createCircuits } from './circuits.js';
export { advanceTopUpOrder, type SupplierRouting } from './routing.js';
export { syncEnvironmentProvider } from './service.js';
