/**
 * Money arithmetic in integer cents: numeric(14,2) values arrive as strings and
 * are never handled as binary floats in a calculation.
 */
/** The largest amount a money column (numeric(14,2)) holds. */
export const MAX_MONEY = '999999999999.99';

export function toCents(value: string | number): number {
  const text = typeof value === 'number' ? value.toFixed(2) : value;
  const match = /^(-)?(\d+)(?:\.(\d{1,2})\d*)?$/.exec(text.trim());
  if (!match) throw new RangeError(`not a money amount: ${text}`);
  const [, sign, whole = '0', fraction = ''] = match;
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  return sign ? -cents : cents;
}

export function fromCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** A numeric string as a JSON number (the spec's prices are numbers). */
export function moneyNumber(value: string | number): number {
  return toCents(value) / 100;
}

/**
 * An amount as operators read it (admin order lists, one order, a refund, providers, the margin report): a string with
 * two decimals, never a JSON number.
 */
export function moneyText(value: string | number): string {
  return fromCents(toCents(value));
}
