/** Orders, as the workers see them: the orders still waiting to move on (statuses and their moves stay in state.ts). */
export { ordersNotMovedOn, type WaitingCursor } from './waiting.js';
