import { z } from '@hono/zod-openapi';
import { validationError } from './errors.js';

/**
 * Laravel-style validation messages (C4): one string per failing field, the field's name in words.
 * Field schemas carry only the predicate ("must be a positive integer."); the label is added here,
 * and a blank value always reads "The <label> field is required.".
 */
export function fieldLabel(key: string): string {
  return key
    .replace(/\[\]$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();
}

export const isBlank = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.length === 0);

const blankToUndefined = (value: unknown) => (isBlank(value) ? undefined : value);

/** Positive integer from JSON numbers or form/query strings. */
export const positiveInt = () =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : blankToUndefined(v)),
    z.number({ error: 'must be a positive integer.' }).int({ error: 'must be a positive integer.' }).positive({ error: 'must be a positive integer.' }),
  );

export const optionalPositiveInt = () => positiveInt().optional();

export const requiredText = (max = 5000) =>
  z.preprocess(
    blankToUndefined,
    z.string({ error: 'must be a string.' }).trim().max(max, { error: `must not be greater than ${max} characters.` }),
  );

/** A number between min and max inclusive, from JSON or form strings. */
export const numberBetween = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : blankToUndefined(v)),
    z
      .number({ error: `must be between ${min} and ${max}.` })
      .min(min, { error: `must be between ${min} and ${max}.` })
      .max(max, { error: `must be between ${min} and ${max}.` }),
  );

export const pageQuery = () =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : blankToUndefined(v)),
    z.number({ error: 'must be a positive integer.' }).int({ error: 'must be a positive integer.' }).min(1, { error: 'must be a positive integer.' }),
  );

/**
 * Validates `input` against `schema`; on failure throws a 422 AppError with one message per field.
 * `labels` overrides the label of a key (order-form fields use their `field_value`).
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, labels: Record<string, string> = {}): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const raw = (input ?? {}) as Record<string, unknown>;
  const messages = new Map<string, string>();
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? '');
    if (messages.has(key)) continue;
    const label = labels[key] ?? fieldLabel(key);
    const predicate = /^must |^is |^has /.test(issue.message) ? issue.message : 'is invalid.';
    messages.set(key, isBlank(raw[key]) ? `The ${label} field is required.` : `The ${label} field ${predicate}`);
  }
  throw validationError([...messages.values()]);
}
