import { z } from '@hono/zod-openapi';
import { AppError, notFound, validationError } from '../core/errors.js';
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

/** A positive integer of any size. */
const positiveNumber = () =>
  z.number(unless(POSITIVE_INTEGER)).refine((v) => Number.isInteger(v) && v >= 1, { error: POSITIVE_INTEGER, abort: true });

/**
 * Every integer id (query, path or body) goes through this one schema (C2 ranges): not a positive integer →
 * 422; a positive integer past MAX_ID is an id that cannot exist, answered as an unknown id by `validate`.
 */
export const id = () =>
  z.preprocess(
    digitsToNumber,
    positiveNumber()
      .refine((v) => v <= MAX_ID, { error: 'is an unknown id.', params: UNKNOWN_ID })
      .openapi({ type: 'integer', minimum: 1, maximum: MAX_ID }),
  );

/**
 * `schema` for the key of a `what` in the URL: a refusal that means "no such resource" (C2: any in the path, an id
 * past MAX_ID in the query) is answered by validationFailure as a 404 naming it, "No <what> with <by> …". Zod issues
 * keep no link to their schema, so the name rides on each issue.
 */
export const keyOf = <S extends z.ZodType>(what: string, schema: S, by = 'id') =>
  z.preprocess((value, ctx) => {
    for (const issue of schema.safeParse(value).error?.issues ?? []) {
      ctx.addIssue({ ...issue, params: { ...(issue as { params?: object }).params, names: { what, by } } } as z.core.$ZodRawIssue);
    }
    return value;
  }, schema);

/** The id of a `what` in the path (`/accounts/:id/…`). */
export const idParam = (what: string) => z.object({ id: keyOf(what, id()) });

/** A count the client chooses (page numbers, campaign caps): a positive integer up to `max`. */
export const positiveInt = (max = MAX_ID) =>
  z.preprocess(
    digitsToNumber,
    positiveNumber()
      .refine((v) => v <= max, { error: `must not be greater than ${max}.` })
      .openapi({ type: 'integer', minimum: 1, maximum: max }),
  );

/**
 * A positive integer whose limit is configured (a card order line's quantity): the caller checks it, so that any
 * number over the limit, however large, is told that limit.
 */
export const positiveCount = () => z.preprocess(digitsToNumber, positiveNumber().openapi({ type: 'integer', minimum: 1 }));

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

/** The other names of a body's fields, by the schema `aliased` made (the form reading gathers lists under them too). */
const ALIASES = new WeakMap<z.ZodType, Record<string, string>>();

/**
 * Input fields renamed in place, so that a failure's message (validationFailure reads the input as given) sees each
 * field under the name it is validated by.
 */
const renamed = (input: unknown, rename: (fields: Record<string, unknown>) => void) => {
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) rename(input as Record<string, unknown>);
  return input;
};

/**
 * `object`, whose fields may also be sent under other names (C5: `{serviceIds: 'service_ids'}`): a field takes the
 * first of its names that is not blank.
 */
export function aliased<T extends z.ZodObject>(aliases: Record<string, string>, object: T) {
  const schema = z.preprocess(
    (input) =>
      renamed(input, (fields) => {
        for (const [alias, name] of Object.entries(aliases)) if (isBlank(fields[name])) fields[name] = fields[alias];
      }),
    object,
  );
  ALIASES.set(schema, aliases);
  return schema;
}

/** The schema that decides a value's shape: through optional, nullable, default and preprocessing. */
const shapeOf = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodPipe
    ? shapeOf((schema.in instanceof z.ZodTransform ? schema.out : schema.in) as z.ZodType)
    : schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault
      ? shapeOf(schema.unwrap() as z.ZodType)
      : schema;

/** The names a body's list fields may be sent under (their aliases too). */
function listNames(schema: z.ZodType): string[] {
  const body = shapeOf(schema);
  if (!(body instanceof z.ZodObject)) return [];
  const lists = Object.keys(body.shape).filter((name) => shapeOf(body.shape[name] as z.ZodType) instanceof z.ZodArray);
  const aliases = Object.entries(ALIASES.get(schema) ?? {}).filter(([, name]) => lists.includes(name));
  return [...lists, ...aliases.map(([alias]) => alias)];
}

/**
 * `schema` for a form body (C5). A form has no lists, only fields: a list field comes as the field repeated, named
 * `name`, `name[]` or `name[0]`…, and sent once it is a list of one. JSON has lists, so there a single value where a
 * list is declared is refused (the schema as it is).
 */
export function formBody<S extends z.ZodType>(schema: S) {
  const names = listNames(schema);
  return z.preprocess(
    (input) =>
      renamed(input, (fields) => {
        for (const name of names) {
          const indexed = Object.keys(fields).filter((key) => key.startsWith(`${name}[`) && /^\[\d+\]$/.test(key.slice(name.length)));
          const value = [fields[name], fields[`${name}[]`]].find((v) => !isBlank(v)) ?? (indexed.length ? indexed.map((key) => fields[key]) : undefined);
          fields[name] = value === undefined || Array.isArray(value) ? value : [value];
        }
      }),
    schema,
  );
}

/**
 * Where the validated input came from (C2): a path segment that is not a valid id names no resource (404);
 * an id past MAX_ID in the query is an unknown id too (404), while inside a body it is an invalid
 * selection (422). Headers are validated as fields.
 */
export type InputSource = 'body' | 'query' | 'path' | 'header';

/** The 404 of an issue's value: naming the resource when its schema is a `keyOf`. */
function unknownResource(issue: z.core.$ZodIssue, given: Record<string, unknown>): AppError {
  const names = (issue as { params?: { names?: { what: string; by: string } } }).params?.names;
  return names ? notFound(names.what, names.by, given[String(issue.path[0])]) : new AppError('not_found');
}

/** The failure for zod `issues` of `raw` input (C4): 422 with one message per field, or 404 (see InputSource). */
export function validationFailure(issues: readonly z.core.$ZodIssue[], raw: unknown, source: InputSource): AppError {
  const given = (raw ?? {}) as Record<string, unknown>;
  if (source === 'path') return unknownResource(issues[0]!, given);
  const messages = new Map<string, string>();
  let unknownId: z.core.$ZodIssue | undefined;
  for (const issue of issues) {
    const key = String(issue.path[0] ?? '');
    if (messages.has(key)) continue;
    const label = fieldLabel(key);
    if (issue.code === 'custom' && issue.params?.unknownId) {
      if (source === 'query') {
        unknownId ??= issue;
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
  if (messages.size === 0 && unknownId) return unknownResource(unknownId, given);
  return validationError([...messages.values()]);
}

/** Validates `input` against `schema` (for input not read by a route: CLI flags, say); throws the failure above. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, source: InputSource = 'body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailure(result.error.issues, input, source);
}
