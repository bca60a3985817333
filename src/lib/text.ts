/** A missing value: undefined, null, an empty or blank string, or an empty list ("The … field is required."). */
export const isBlank = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.length === 0);

/**
 * The one text rule (C2): a NUL character or an unpaired UTF-16 surrogate is never stored, looked up or
 * logged; it makes the field invalid. Used by every string schema and by fields checked by hand.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const isStorableText = (value: string): boolean => !UNSTORABLE.test(value);

export const NOT_STORABLE = 'must not contain NUL characters or unpaired surrogates.';
