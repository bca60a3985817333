import { setMaxListeners } from 'node:events';

/**
 * The controller whose signal every outgoing request of a fake supplier carries, aborted when the supplier closes.
 * undici's fetch lets go of its abort listener only once the request is garbage collected, so one signal shared by
 * thousands of callbacks passes Node's listener warning (a "possible leak") without leaking: the limit is lifted.
 */
export function outgoingRequests(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
