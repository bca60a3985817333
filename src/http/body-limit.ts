import type { Context, Next } from 'hono';
import { AppError } from '../errors.js';
import { LIMITS } from './server.js';

/** How much of an oversized upload is read and dropped, and for how long, before the answer goes out anyway. */
const DISCARD_BYTES = LIMITS.MAX_UPLOAD_BYTES;
const DISCARD_MS = 30_000;

/** Reads what is left of a body and drops it, within the bounds above. */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const deadline = Date.now() + DISCARD_MS;
  let read = 0;
  try {
    while (read <= DISCARD_BYTES && Date.now() < deadline) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to answer.
  }
}

/**
 * Bodies over `max` bytes are refused with 413 (C2). The rest of the upload is read and dropped first, so a
 * client that sends its whole body before reading gets the answer instead of a connection reset. A body
 * with a declared length is checked up front; a chunked one is counted as it arrives.
 */
export const bodyLimit = (max: number) => async (c: Context, next: Next) => {
  // The body stream is only opened when it must be read here: a body a route never reads is then drained
  // by Node after the answer, and the connection stays usable.
  const declared = c.req.header('content-length');
  const chunked = c.req.header('transfer-encoding') !== undefined;
  if (!chunked) {
    if (declared === undefined || Number(declared) <= max) return next();
    if (c.req.raw.body) await discard(c.req.raw.body.getReader());
    throw new AppError('payload_too_large');
  }
  const body = c.req.raw.body;
  if (!body) return next();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await discard(reader);
      throw new AppError('payload_too_large');
    }
    chunks.push(value);
  }
  c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks) });
  return next();
};
