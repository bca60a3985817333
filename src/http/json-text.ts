import type { Context, TypedResponse } from 'hono';
import type { AppEnv } from './context.js';

/**
 * A success answer (`{status: "success", message}`) whose message is JSON text already written (by the database, say),
 * sent as it is instead of parsed and serialised again; typed as the route's JSON answer of `T`.
 */
export function successText<T>(c: Context<AppEnv>, message: string): TypedResponse<{ status: 'success'; message: T }, 200, 'json'> {
  c.header('Content-Type', 'application/json');
  return c.body(successBody(message), 200) as unknown as TypedResponse<{ status: 'success'; message: T }, 200, 'json'>;
}

/** The text of a success answer whose message is JSON text already written. */
export const successBody = (message: string) => `{"status":"success","message":${message}}`;
