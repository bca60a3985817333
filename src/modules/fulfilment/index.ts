/**
 * Fulfilment, as the rest of the service sees it: moving an order on (card codes from inventory, top-ups to
 * their provider), restocks, refunds and an operator's completion. Workers and operator tools come through here.
 */
export { advanceOrder, batchedFulfilment, type FulfilmentResult } from './jobs.js';
export { fulfilmentJobs, fulfilmentPace, LOAD_INTERVAL_MS, PLACEMENT_FIRST, type FulfilmentPace } from './pace.js';
export { foldCardSales, restockCardService, servicesReadyToRestock } from './cards.js';
export { refundOrder } from './refunds.js';
export { completeTopUpOrder, settleAttemptForOperator } from './top-ups.js';
export { advanceTopUpOrder, type SupplierRouting } from './top-up-routing.js';
export { TEST_WAIT_MS } from './test-mode.js';
