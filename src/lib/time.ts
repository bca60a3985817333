/**
 * PostgreSQL timestamptz text (session TimeZone=UTC), e.g. `2026-11-23 07:40:12.1234+00`,
 * → ISO 8601 UTC with microseconds, e.g. `2026-11-23T07:40:12.123400Z`.
 */
export function isoMicros(value: string): string;
export function isoMicros(value: string | null): string | null;
export function isoMicros(value: string | null): string | null {
  if (value === null) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:Z|[+-]00(?::?00)?)?$/.exec(value);
  if (!match) return new Date(value).toISOString().replace('Z', '000Z');
  const [, day, time, fraction = ''] = match;
  return `${day}T${time}.${fraction.padEnd(6, '0')}Z`;
}

/** Today's date in UTC as YYYY-MM-DD (campaign dates are compared in UTC, C9). */
export function utcToday(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}
