/** Top-up suppliers as the workers see them (C22): the circuits of the providers and their balances. */
export { checkBalances } from './balances.js';
export { createCircuits } from './circuits.js';
