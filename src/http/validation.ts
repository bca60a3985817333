import { z } from '@hono/zod-openapi';
import { AppError, validationError } from '../errors.js';
import { isBlank, isStorableText, NOT_STORABLE } from '../lib/text.js';

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


const blankToUndefined = (value: unknown) => (isBlank(value) ? undefined : value);

/** Digits in a form or query string are numbers; JSON numbers pass as they are. */
const digitsToNumber = (v: unknown) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : blankToUndefined(v));

/** The largest id any table holds (PostgreSQL `integer`, C2 ranges). */
export const MAX_ID = 2_147_483_647;

/** Marks the issue of an id that is a positive integer but beyond MAX_ID: it names no resource. */
const UNKNOWN_ID = { unknownId: true } as const;

const POSITIVE_INTEGER = 'must be a positive integer.';

/** What a field schema says of a value that is not there: rendered "The <label> field is required." */
export const REQUIRED = 'is required.';

/** A type error that tells a missing value (undefined) from a wrong one. */
const unless = (message: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? REQUIRED : message) });

/**
 * Every integer id (query, path or body) goes through this one schema (C2 ranges): not a positive integer →
 * 422; a positive integer past MAX_ID is an id that cannot exist, answered as an unknown id by `validate`.
 */
export const id = () =>
  z.preprocess(
    digitsToNumber,
    z
      .number(unless(POSITIVE_INTEGER))
      .refine((v) => Number.isInteger(v) && v >= 1, { error: POSITIVE_INTEGER, abort: true })
      .refine((v) => v <= MAX_ID, { error: 'is an unknown id.', params: UNKNOWN_ID })
      .openapi({ type: 'integer', minimum: 1, maximum: MAX_ID }),
  );

/** A count the client chooses (quantities, page numbers): a positive integer up to `max`. */
export const positiveInt = (max = MAX_ID) =>
  z.preprocess(
    digitsToNumber,
    z
      .number(unless(POSITIVE_INTEGER))
      .refine((v) => Number.isInteger(v) && v >= 1, { error: POSITIVE_INTEGER, abort: true })
      .refine((v) => v <= max, { error: `must not be greater than ${max}.` })
      .openapi({ type: 'integer', minimum: 1, maximum: max }),
  );

export const pageQuery = () => positiveInt();

/** A string field: trimmed, at most `max` characters, storable (see isStorableText). */
export const text = (max: number) =>
  z
    .string(unless('must be a string.'))
    .refine(isStorableText, { error: NOT_STORABLE, abort: true })
    .trim()
    .max(max, { error: `must not be greater than ${max} characters.` });

/** A required string field; blank (missing, null, empty or spaces only) is "required". */
export const requiredText = (max = 5000) => z.preprocess(blankToUndefined, text(max));

/** An optional string field; blank reads as absent. */
export const optionalText = (max: number) => z.preprocess(blankToUndefined, text(max).optional());

/** A number between min and max inclusive, from JSON or form strings. */
export const numberBetween = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : blankToUndefined(v)),
    z
      .number(unless(`must be between ${min} and ${max}.`))
      .min(min, { error: `must be between ${min} and ${max}.` })
      .max(max, { error: `must be between ${min} and ${max}.` }),
  );

/**
 * Where the validated input came from (C2): a path segment that is not a valid id names no resource (404);
 * an id past MAX_ID in the query is an unknown id too (404), while inside a body it is an invalid
 * selection (422). Headers are validated as fields.
 */
export type InputSource = 'body' | 'query' | 'path' | 'header';

/** The failure for zod `issues` of `raw` input (C4): 422 with one message per field, or 404 (see InputSource). */
export function validationFailure(issues: readonly z.core.$ZodIssue[], raw: unknown, source: InputSource): AppError {
  if (source === 'path') return new AppError('not_found');
  const given = (raw ?? {}) as Record<string, unknown>;
  const messages = new Map<string, string>();
  let unknownId = false;
  for (const issue of issues) {
    const key = String(issue.path[0] ?? '');
    if (messages.has(key)) continue;
    const label = fieldLabel(key);
    if (issue.code === 'custom' && issue.params?.unknownId) {
      if (source === 'query') {
        unknownId = true;
        continue;
      }
      messages.set(key, `The selected ${label} is invalid.`);
    } else if (issue.message.startsWith('The ')) {
      // A field whose whole message is written out (a header, a rule over several fields).
      messages.set(key, issue.message);
    } else if (issue.message === REQUIRED || isBlank(given[key])) {
      messages.set(key, `The ${label} field is required.`);
    } else {
      messages.set(key, `The ${label} field ${/^must |^is |^has /.test(issue.message) ? issue.message : 'is invalid.'}`);
    }
  }
  if (messages.size === 0 && unknownId) return new AppError('not_found');
  return validationError([...messages.values()]);
}

/** Validates `input` against `schema` (for input not read by a route: CLI flags, say); throws the failure above. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, source: InputSource = 'body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailure(result.error.issues, input, source);
}
