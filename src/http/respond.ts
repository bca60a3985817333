import type { Context } from 'hono';

/** Interface A success envelope: `message` is an object, or a string for write operations. */
export const success = (c: Context, message: unknown, extra: Record<string, unknown> = {}) =>
  c.json({ status: 'success', message, ...extra }, 200);
