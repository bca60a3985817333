/**
 * The order state machines, as the workers see them: the orders still waiting to move on, a top-up's next routing
 * step, and how a status change is logged and counted (statuses and their moves stay in state.ts).
 */
export { statusObserver } from './events.js';
export { nextRoutingStep } from './delivery.js';
export { ordersNotMovedOn, testRestocksDue, type WaitingCursor, type WaitingOrder } from './waiting.js';
