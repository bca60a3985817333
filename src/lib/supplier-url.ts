/**
 * What a supplier's base address may be (C22): an http or https URL with no user name or password (they would be
 * shown back and logged with the address; credentials go in `credentials`), no query and no fragment (paths are
 * appended to it). The message says what is wrong, or null when the address is usable.
 */
export function supplierUrlProblem(value: string): string | null {
  if (!URL.canParse(value)) return 'must be an http or https URL.';
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL.';
  if (url.username || url.password) return 'must not hold a user name or password (put credentials in credentials).';
  if (url.search || value.includes('?')) return 'must not hold a query.';
  if (url.hash || value.includes('#')) return 'must not hold a fragment.';
  return null;
}
