import { z } from '@hono/zod-openapi';
import { fieldLabel, keyOf, text, validationFailure } from './validation.js';

/** Request and response fields several features share: money, an order number, a checked list, a delivery state. */

/** Money as a JSON number or a string with at most two decimals; `signed` allows a leading minus. */
export const moneyAmount = (signed: boolean) =>
  z.preprocess(
    (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : v),
    z
      .string({ error: 'must be a number with at most 2 decimals.' })
      .regex(signed ? /^-?\d{1,12}(\.\d{1,2})?$/ : /^\d{1,12}(\.\d{1,2})?$/, {
        error: 'must be a number with at most 2 decimals.',
      }),
  );

/** C24's price guard on either make-order: the most the whole order may cost, in the account's currency. */
export const maxPriceField = moneyAmount(false)
  .optional()
  .openapi({
    description:
      "The most the whole order may cost, in the account's currency (a number or a string, at most 2 decimals): a dearer order is a 409 naming both figures, and nothing is written.",
    example: '25.00',
  });

/** An order number in the path. */
export const UtrParam = z.object({ utr: keyOf('order', text(32).regex(/^[A-Z0-9]+$/), 'utr') });

/** An amount operators read: a string with two decimals. */
export const adminMoney = z.string().regex(/^-?\d+\.\d{2}$/).openapi({ example: '12.50' });

/** Where a top-up's delivery stands (order-state/delivery.ts); null for card orders. */
export const DeliveryStateSchema = z
  .enum(['routing', 'with_supplier', 'supplier_overdue', 'with_operator', 'delivered', 'refunded'])
  .nullable()
  .openapi({
    description:
      'Top-ups: routing (going to its next route), with_supplier (an attempt is open), supplier_overdue (an attempt still open after PROVIDER_SETTLE_HOURS: settle it), with_operator (complete or refund it), delivered, refunded',
  });

/**
 * The Laravel name of a list entry's field: `order_information`, entry 0, `field_name` → "order information.0.field name".
 * The first failing entry is the list's one message.
 */
function entryProblem(where: string, item: z.ZodType, entry: unknown): string | null {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `The ${where} field must be an object.`;
  const result = item.safeParse(entry);
  if (result.success) return null;
  const [message] = [validationFailure(result.error.issues, entry, 'body').errors].flat();
  const label = fieldLabel(String(result.error.issues[0]!.path[0] ?? ''));
  return message!.replace(label, `${where}.${label}`);
}

/**
 * A list of objects checked entry by entry, so that a failure names the entry; `distinct` is a key (or keys, together)
 * no two entries share, a duplicate named by its last key.
 */
export const listOf = <T extends z.ZodType>(name: string, item: T, { max, distinct }: { max: number; distinct: string | string[] }) =>
  z.preprocess(
    (value, ctx) => {
      if (!Array.isArray(value)) return value;
      if (value.length > max) {
        ctx.addIssue({ code: 'custom', message: `The ${fieldLabel(name)} field must not have more than ${max} items.`, input: value });
        return value;
      }
      const seen = new Set<unknown>();
      for (const [i, entry] of value.entries()) {
        const where = `${fieldLabel(name)}.${i}`;
        let problem = entryProblem(where, item, entry);
        const keys = [distinct].flat();
        const key = problem === null ? JSON.stringify(keys.map((k) => (entry as Record<string, unknown>)[k])) : undefined;
        if (problem === null && seen.has(key)) problem = `The ${where}.${fieldLabel(keys.at(-1)!)} field has a duplicate value.`;
        seen.add(key);
        if (problem !== null) {
          ctx.addIssue({ code: 'custom', message: problem, input: value });
          break;
        }
      }
      return value;
    },
    z.array(item, { error: 'must be a list.' }).max(max, { error: `must not have more than ${max} items.` }),
  );

/** A yes/no field: JSON's true and false, or a form's "true"/"false"/"1"/"0". */
export const flagField = () =>
  z.preprocess(
    (value) => ({ true: true, '1': true, false: false, '0': false })[String(value) as 'true'] ?? value,
    z.boolean({ error: 'must be true or false.' }),
  );
