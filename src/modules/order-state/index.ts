/**
 * Orders, as the workers see them: the orders still waiting to move on, and how a status change is logged and
 * counted (statuses and their moves stay in state.ts).
 */
export { statusObserver } from './events.js';
export { nextRoutingStep } from './delivery.js';
export { ordersNotMovedOn, type WaitingCursor, type WaitingOrder } from './waiting.js';
