/** Orders, as the rest of the service sees them: statuses and their moves, and the orders still waiting to move on. */
export { canTransition, ORDER_STATUS, parseStatus, STATUS_LABELS, transitionOrder, type OrderStatus } from './state.js';
export { ordersNotMovedOn, type WaitingCursor, type WaitingOrder } from './waiting.js';
