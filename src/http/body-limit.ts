import type { Context, MiddlewareHandler, Next } from 'hono';
import { matchedRoutes } from 'hono/route';
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

/** A route's own limit for bodies of one content type, which it reads itself as a stream (see `streamedBody`). */
type StreamedBody = { type: string; max: number };

/** Declarations by the route middleware that carries them: the general limit finds them among the matched handlers. */
const declared = new WeakMap<object, StreamedBody>();

const mediaType = (c: Context) => (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Declares that a route reads bodies of `type` itself, streamed, up to `max` bytes (a code import): the general
 * limit leaves those alone instead of holding them in memory, while other content types keep it. `use` goes into
 * the route's middleware; `read(c, consume)` hands `consume` the body as it arrives, failing with 413 once past
 * `max`, and then reads and drops whatever `consume` left unread, so the client gets to read the answer.
 */
export function streamedBody(type: string, max: number) {
  const use: MiddlewareHandler = (_c, next) => next();
  declared.set(use, { type, max });
  const read = async <T>(c: Context, consume: (chunks: AsyncIterable<Uint8Array>) => Promise<T>): Promise<T> => {
    const reader = c.req.raw.body?.getReader();
    async function* chunks() {
      let size = 0;
      for (;;) {
        const next = await reader?.read();
        if (!next || next.done) return;
        size += next.value.byteLength;
        if (size > max) throw new AppError('payload_too_large');
        yield next.value;
      }
    }
    try {
      return await consume(chunks());
    } finally {
      if (reader) await discard(reader);
    }
  };
  return { use, read };
}

/**
 * Bodies over `max` bytes are refused with 413 (C2), unless the route declared its own limit for their content
 * type (`streamedBody`). The rest of the upload is read and dropped first, so a client that sends its whole body
 * before reading gets the answer instead of a connection reset. A body with a declared length is checked up front;
 * a chunked one is counted as it arrives (a streamed one by the route as it reads).
 */
export const bodyLimit = (max: number) => async (c: Context, next: Next) => {
  // The body stream is only opened when it must be read here: a body a route never reads is then drained
  // by Node after the answer, and the connection stays usable.
  const type = mediaType(c);
  const own = matchedRoutes(c)
    .map((route) => declared.get(route.handler))
    .find((declaration) => declaration?.type === type);
  const limit = own?.max ?? max;
  const length = c.req.header('content-length');
  const chunked = c.req.header('transfer-encoding') !== undefined;
  if (!chunked || own) {
    if (length === undefined || Number(length) <= limit) return next();
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
