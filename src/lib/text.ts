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

/** Order-form patterns compiled once each (C27): operators set few, buyers send many values. */
const fieldPatterns = new Map<string, RegExp>();

/** The compiled form of an order field's `pattern`: the whole value must match, in Unicode mode. Throws when invalid. */
function fieldPattern(pattern: string): RegExp {
  let compiled = fieldPatterns.get(pattern);
  if (!compiled) {
    compiled = new RegExp(`^(?:${pattern})$`, 'u');
    if (fieldPatterns.size >= 1000) fieldPatterns.clear();
    fieldPatterns.set(pattern, compiled);
  }
  return compiled;
}

/** Whether an operator's order-field pattern is a regular expression the store can use. */
export function isFieldPattern(pattern: string): boolean {
  try {
    fieldPattern(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Whether a buyer's value matches the whole of an order field's pattern. */
export const matchesFieldPattern = (pattern: string, value: string): boolean => fieldPattern(pattern).test(value);
