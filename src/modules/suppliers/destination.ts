import type { OrderFieldValue } from '../../db/schema.js';

/**
 * A route's `destination` (C22): how the order's fields make the one destination a supplier takes, as a template over
 * the order form's field names, e.g. `{user_id}{zone_id}` or `{user_id}-{zone_id}`; text outside the braces is kept.
 */
const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** A template is text with `{field_name}` placeholders, at least one; any other brace is a mistake. */
export const isDestinationTemplate = (template: string): boolean =>
  destinationNames(template).length > 0 && !/[{}]/.test(template.replace(PLACEHOLDER, ''));

/** The field names a template uses, in order. */
export const destinationNames = (template: string): string[] => [...template.matchAll(PLACEHOLDER)].map((match) => match[1]!);

/** The destination of an order: each placeholder replaced by the order's value of that field; `missing` names one it lacks. */
export function renderDestination(template: string, fields: OrderFieldValue[]): { value: string } | { missing: string } {
  const values = new Map(fields.map((field) => [field.name, field.value]));
  const missing = destinationNames(template).find((name) => !values.has(name));
  if (missing !== undefined) return { missing };
  return { value: template.replace(PLACEHOLDER, (_, name: string) => values.get(name)!) };
}
