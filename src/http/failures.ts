import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './context.js';
import { AppError, isDependencyDown } from '../core/errors.js';

/**
 * Whatever a request threw, as a catalogue error. An unexpected error is logged with the request id
 * (the client gets a generic message and that id); a client that went away mid-request is not a
 * server error and is logged at info.
 */
export function asAppError(c: Context<AppEnv>, err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException && err.status < 500) {
    return new AppError(err.status === 413 ? 'payload_too_large' : err.status === 415 ? 'unsupported_media_type' : 'bad_request');
  }
  const { logger } = c.get('services');
  const request = { requestId: c.get('requestId'), method: c.req.method, path: c.req.path };
  if (c.req.raw.signal.aborted) {
    logger.info(request, 'client disconnected before the answer');
    return new AppError('client_closed');
  }
  if (isDependencyDown(err)) {
    logger.warn({ ...request, err }, 'a dependency is unavailable');
    return new AppError('unavailable');
  }
  logger.error({ ...request, err }, 'unexpected error');
  return new AppError('internal');
}
