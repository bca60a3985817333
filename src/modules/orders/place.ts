import type { Db } from '../../db/client.js';
import type { OrderFieldValue, ProductKind } from '../../db/schema.js';
import type { PlayerCheck } from '../suppliers/players.js';
import type { OwnedStamps } from '../../lib/change-stamps.js';
import { AppError, validationError } from '../../core/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import { moneyText } from '../../lib/money.js';
import { cardServicesOrderable, checkTopUpOrder, mergeCardLines, newUtr, placeOrder, replayedOrder, requestDigest, type CardLineRequest, type Idempotency } from './service.js';

/**
 * What placing an order needs: the database, and a way to hand a placed order to fulfilment. The order is
 * committed before it is handed over, so a hand-over that fails loses nothing: the reconciler enqueues it.
 */
export type PlacementDeps = {
  db: Db;
  logger: Logger;
  metrics: Pick<Metrics, 'orderPlaced'>;
  /** The account's order pages, marked changed once an order is placed (before its client hears the utr). */
  orderPages: Pick<OwnedStamps, 'changed'>;
  enqueue: (order: { orderId: number; utr: string }) => Promise<unknown>;
  /** Asks the service's provider about the player (C27), for a top-up order placed with `check_player`. */
  lookUpPlayer: (topUpServiceId: number, fields: OrderFieldValue[]) => Promise<PlayerCheck>;
};

/**
 * A new order (not an idempotent replay): counted, logged (with its mode, C25), handed to fulfilment, and its account's
 * order pages marked changed.
 */
async function handOver(
  deps: PlacementDeps,
  kind: ProductKind,
  order: { orderId: number; utr: string },
  { accountId, livemode }: { accountId: number; livemode: boolean },
): Promise<void> {
  const mode = livemode ? 'live' : 'test';
  deps.metrics.orderPlaced(kind, mode);
  deps.logger.info({ utr: order.utr, kind, mode }, 'order placed');
  const enqueued = deps.enqueue(order).catch((err) => deps.logger.warn({ utr: order.utr, err }, 'order enqueue failed; the reconciler will pick it up'));
  await Promise.all([enqueued, deps.orderPages.changed([accountId])]);
}

/**
 * The Idempotency-Key's claim on this request. A max_price is part of the request when given (a retry with another
 * limit is another request); left out otherwise, so requests digest as they did before the price guard.
 */
const idempotency = (key: string | null, endpoint: string, request: Record<string, unknown>, maxPrice: string | null): Idempotency | null =>
  key === null ? null : { key, endpoint, digest: requestDigest(endpoint, maxPrice === null ? request : { ...request, max_price: moneyText(maxPrice) }) };

/** A12: a card order of the caller's, placed in one statement (C6, C7, C15). */
export async function placeCardOrder(
  deps: PlacementDeps,
  input: { accountId: number; livemode: boolean; lines: CardLineRequest[]; idempotencyKey: string | null; maxQuantityPerLine: number; maxPrice: string | null },
): Promise<{ utr: string }> {
  const requested = mergeCardLines(input.lines);
  const request = { service_ids: input.lines.map((l) => l.serviceId), quantities: input.lines.map((l) => l.quantity) };
  const claim = idempotency(input.idempotencyKey, 'card/make-order', request, input.maxPrice);
  if (requested.some((l) => l.quantity > input.maxQuantityPerLine)) {
    // C15: a repeat of an order placed before the limit was lowered still gets its first answer.
    const kept = claim && (await replayedOrder(deps.db, input.accountId, input.livemode, claim));
    if (kept) return { utr: kept.utr };
    throw validationError(await cardOrderProblems(deps.db, { serviceIds: request.service_ids, quantities: request.quantities }, input.maxQuantityPerLine));
  }
  const placed = await placeOrder(deps.db, {
    accountId: input.accountId,
    kind: 'card',
    utr: newUtr('card'),
    topUpId: null,
    informations: null,
    fields: null,
    lines: requested,
    idempotency: claim,
    maxPrice: input.maxPrice,
    livemode: input.livemode,
  });
  // Checked by the statement itself: a card order needs no catalog read of its own.
  if (placed.kind === 'unorderable') throw validationError(['The selected service ids is invalid.']);
  if (placed.kind === 'placed') await handOver(deps, 'card', placed, input);
  return { utr: placed.utr };
}

/**
 * A key claimed by the release before this one digested a top-up by the values as the form labelled them: for the 24
 * hours such a key lives, a repeat that differs from it only in that way gets its first answer too (once read against
 * the form, as that release did). Any other refusal stands. Goes once no key of that release can be alive.
 */
async function keptUnderEarlierDigest(deps: PlacementDeps, input: Parameters<typeof placeTopUpOrder>[1], refusal: unknown) {
  if (!(refusal instanceof AppError && refusal.code === 'idempotency_conflict')) throw refusal;
  const { informations } = await checkTopUpOrder(deps.db, input).catch(() => {
    throw refusal;
  });
  const earlier = idempotency(input.idempotencyKey, 'top-up/make-order', { topUpId: input.topUpId, serviceId: input.serviceId, informations }, input.maxPrice)!;
  return replayedOrder(deps.db, input.accountId, input.livemode, earlier);
}

/** Body fields that are not order-form values: the ids, and the price guard and player check (claimed apart or not at all). */
const NOT_FORM_VALUES = new Set(['topUpId', 'serviceId', 'max_price', 'check_player']);

/**
 * What a top-up request asks for, as the client sent it (C15's "same body"): its ids and its form values by field
 * name, numbers as text. Nothing read from the catalog, so a repeat digests the same after the form has changed.
 */
const topUpRequest = ({ topUpId, serviceId, fields }: { topUpId: number; serviceId: number; fields: Record<string, unknown> }) => ({
  topUpId,
  serviceId,
  values: Object.fromEntries(
    Object.entries(fields)
      .filter(([name]) => !NOT_FORM_VALUES.has(name))
      .map(([name, value]) => [name, typeof value === 'number' ? String(value) : value]),
  ),
});

/**
 * The messages of a card order's fields that fail against the catalog or the quantity limit, in field order (service
 * ids, quantities); a list null is one the request schema refused already. Equal services count as one line.
 */
export async function cardOrderProblems(
  db: Db,
  { serviceIds, quantities }: { serviceIds: number[] | null; quantities: number[] | null },
  maxQuantityPerLine: number,
): Promise<string[]> {
  const messages = serviceIds && !(await cardServicesOrderable(db, serviceIds)) ? ['The selected service ids is invalid.'] : [];
  const paired = serviceIds && quantities && serviceIds.length === quantities.length;
  const perLine = paired ? mergeCardLines(serviceIds.map((serviceId, i) => ({ serviceId, quantity: quantities[i]! }))).map((l) => l.quantity) : (quantities ?? []);
  if (perLine.some((quantity) => quantity > maxQuantityPerLine)) messages.push(`The quantities field must not be greater than ${maxQuantityPerLine}.`);
  return messages;
}

/** The 422 of an order whose player the provider does not know, with the provider's reason when it gave one. */
const playerRefusal = (reason: string | undefined) =>
  `The player check found no player for these fields${reason ? `: ${reason.replace(/[.\s]+$/, '')}` : ''}.`;

/** A6: a top-up order of the caller's, with its order-form values checked against the top-up (C4, C15). */
export async function placeTopUpOrder(
  deps: PlacementDeps,
  input: {
    accountId: number;
    livemode: boolean;
    topUpId: number;
    serviceId: number;
    fields: Record<string, unknown>;
    idempotencyKey: string | null;
    maxPrice: string | null;
    /** C27: refuse (422) fields the player check calls invalid, before any money moves. */
    checkPlayer: boolean;
  },
): Promise<{ utr: string }> {
  const claim = idempotency(input.idempotencyKey, 'top-up/make-order', topUpRequest(input), input.maxPrice);
  // C15: a repeat gets its first answer before the catalog (which may have changed since) or a provider is asked.
  const kept = claim && (await replayedOrder(deps.db, input.accountId, input.livemode, claim).catch((err: unknown) => keptUnderEarlierDigest(deps, input, err)));
  if (kept) return { utr: kept.utr };
  const { informations, fields } = await checkTopUpOrder(deps.db, input);
  if (input.checkPlayer) {
    const player = await deps.lookUpPlayer(input.serviceId, fields);
    if (!player.valid) throw validationError([playerRefusal(player.reason)]);
  }
  const placed = await placeOrder(deps.db, {
    accountId: input.accountId,
    kind: 'top_up',
    utr: newUtr('top_up'),
    topUpId: input.topUpId,
    informations,
    fields,
    lines: [{ serviceId: input.serviceId, quantity: 1 }],
    idempotency: claim,
    maxPrice: input.maxPrice,
    livemode: input.livemode,
  });
  if (placed.kind === 'unorderable') {
    // Taken off sale since the check above read the catalog: the check now names what is no longer orderable.
    await checkTopUpOrder(deps.db, input);
    throw validationError(['The selected service id is invalid.']);
  }
  if (placed.kind === 'placed') await handOver(deps, 'top_up', placed, input);
  return { utr: placed.utr };
}
