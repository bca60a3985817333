import { z } from '@hono/zod-openapi';
import { adminMoney } from '../../http/fields.js';
import { pageSchema } from '../../http/pagination.js';
import { pageQuery, text } from '../../http/validation.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** PostgreSQL's offsets go to ±15:59. */
const INSTANT = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-](0\d|1[0-5]):[0-5]\d)$/;

/**
 * A day of the calendar from the year 1 on: `2026-02-30` is not one (JavaScript's Date would roll it over to March),
 * nor is `0000-01-01` (PostgreSQL has no year 0).
 */
const calendarDay = (day: string) => {
  const at = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().startsWith(day) && !day.startsWith('0000');
};

/** A day (`2026-11-01`, the whole UTC day) or an instant with its offset (`2026-11-01T12:00:00Z`). */
const dayOrInstant = text(40)
  .refine((value) => (DAY.test(value) ? calendarDay(value) : calendarDay(INSTANT.exec(value)?.[1] ?? '')), {
    error: 'must be a date (2026-11-01) or a date and time with its offset (2026-11-01T12:00:00Z).',
  })
  .optional();

/** C24 statement: C11 paging, an optional range, and `format=csv` for every entry of the range as CSV. */
export const StatementQuery = z
  .object({
    page: pageQuery().optional(),
    per_page: pageQuery().optional(),
    from: dayOrInstant.openapi({ description: 'Entries from this day (UTC) or instant on', example: '2026-11-01' }),
    to: dayOrInstant.openapi({ description: 'Entries up to this day (UTC, included) or instant', example: '2026-11-30' }),
    format: z.enum(['json', 'csv'], { error: 'must be json or csv.' }).optional().openapi({
      description: 'csv: every entry of the range (no paging), streamed as text/csv with the same columns',
    }),
  })
  .refine((q) => !q.from || !q.to || Date.parse(DAY.test(q.from) ? `${q.from}T00:00:00Z` : q.from) <= Date.parse(DAY.test(q.to) ? `${q.to}T23:59:59.999Z` : q.to), {
    path: ['to'],
    error: 'The to field must be a date after or equal to from.',
  });

export const StatementEntrySchema = z
  .object({
    id: z.number().int(),
    created_at: z.string().openapi({ example: '2026-11-27T10:15:02.123456Z' }),
    kind: z.enum(['deposit', 'adjustment', 'order_debit', 'order_refund']),
    amount: adminMoney.openapi({ description: 'Signed: debits are negative', example: '-12.50' }),
    balance_after: adminMoney.openapi({ example: '87.50' }),
    currency: z.string().openapi({ example: 'USD' }),
    utr: z.string().optional().openapi({ description: 'The order, for order debits and refunds', example: 'C0MWT6AW5N89FD612DA6B49BED' }),
    reason: z.string().optional().openapi({ description: "An operator's reason, for adjustments and refunds" }),
  })
  .openapi('StatementEntry');

export const StatementPage = pageSchema('data', StatementEntrySchema);
