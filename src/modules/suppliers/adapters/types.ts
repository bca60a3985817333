import type { OrderFieldValue } from '../../../db/schema.js';

/**
 * One interface for every top-up supplier protocol (DESIGN C22). An adapter speaks one supplier's protocol and
 * maps every answer onto exactly four outcomes; what to do with them (next route, settle, refund) is decided by
 * the routing rules in `fulfilment/top-up-routing.ts`, never here.
 *
 * - `completed`: delivered.
 * - `pending`: the supplier has the order and will finish it (a status query or a callback will tell).
 * - `refused`: nothing was delivered and nothing ever will be (a definite refusal, or a status answer that it
 *   never received the order): the order may go to the next route.
 * - `unknown`: anything else (a timeout, a cut connection, a 5xx, an answer that cannot be read): the supplier may
 *   or may not deliver, so the order is never sent elsewhere until a status query or a callback settles it.
 */
export type SupplierOutcome =
  | { kind: 'completed'; providerReference?: string }
  | { kind: 'pending'; providerReference?: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

export type OutcomeKind = SupplierOutcome['kind'];

/** What a supplier is asked to deliver. `reference` is the order's utr: the same on every send and status query. */
export type SupplierOrder = {
  reference: string;
  /** The supplier's own code for the product (the route's `product_code`). */
  productCode: string;
  /** The buyer's answers to the top-up's form (e.g. a player id), in the form's order, each with its name and type. */
  fields: OrderFieldValue[];
  /** The route's `destination` made from the fields (`{user_id}{zone_id}` → `123456781234`); null without one. */
  destination: string | null;
  quantity: number;
};

/** A provider as its adapter needs it: credentials already unsealed, kept only as long as the call. */
export type ProviderConnection = {
  id: number;
  baseUrl: string;
  credentials: Record<string, string>;
};

/** A callback the supplier sent, checked: the order it is about and what it says. */
export type CallbackReport = { reference: string; outcome: SupplierOutcome };

/** The raw request of a callback, as received (the body's exact bytes, for the signature). */
export type CallbackRequest = { headers: Headers; body: string };

/** Who a top-up would go to, asked before an order is placed (C27): the route's product code and the buyer's fields. */
export type PlayerQuery = { productCode: string; fields: OrderFieldValue[]; destination: string | null };

/** What a provider says of a player: whether the fields name one, and its nickname or why not. */
export type PlayerAnswer = { valid: boolean; nickname?: string; reason?: string };

export type SupplierAdapter = {
  /** Sends the order. Never throws: a network error or a timeout (`signal`) is the `unknown` outcome. */
  send: (order: SupplierOrder, signal: AbortSignal) => Promise<SupplierOutcome>;
  /** Asks what became of `order` (sent before with the same reference). Never throws, as `send`. */
  status: (order: SupplierOrder, signal: AbortSignal) => Promise<SupplierOutcome>;
  /**
   * Checks a callback's signature (and freshness, where the protocol has a timestamp) and reads it; null when the
   * signature does not hold or the body is not the protocol's. A callback can only settle an order, never place one.
   */
  verifyCallback: (request: CallbackRequest) => CallbackReport | null;
  /**
   * Looks a player up (C27), where the protocol can; null when no answer could be read (a timeout, `signal`, included).
   * Never throws, as `send`.
   */
  checkPlayer?: (query: PlayerQuery, signal: AbortSignal) => Promise<PlayerAnswer | null>;
  /** The store's balance with the supplier, as a decimal string; throws when it cannot be read. */
  balance?: (signal: AbortSignal) => Promise<string>;
};

/** Builds the adapter of one provider (its kind's protocol, its address and credentials). */
export type AdapterFactory = (provider: ProviderConnection) => SupplierAdapter;

/** What `credentials` must hold for a kind, for validation at `POST /admin/providers` (names → description). */
export type CredentialFields = Record<string, string>;
