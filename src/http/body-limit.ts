import type { Context, MiddlewareHandler, Next } from 'hono';
import { matchedRoutes } from 'hono/route';
import { AppError } from '../errors.js';

/** A route's own limit for bodies of one content type, which it reads itself as a stream (see `streamedBody`). */
type StreamedBody = { type: string; max: number };

/** Declarations by the route middleware that carries them: the general limit finds them among the matched handlers. */
const declared = new WeakMap<object, StreamedBody>();

const mediaType = (c: Context) => (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Declares that a route reads bodies of `type` itself, streamed, up to `max` bytes (a code import): the general
 * limit leaves those alone instead of holding them in memory, while other content types keep it. `use` goes into
 * the route's middleware; `read(c, consume)` hands `consume` the body as it arrives, failing with 413 once past
 * `max`. Whatever `consume` left unread is the server's to drop after the answer (serveHttp).
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
    return consume(chunks());
  };
  return { use, read };
}

/**
 * Bodies over `max` bytes are refused with 413 (C2) as soon as that is known, unless the route declared its own
 * limit for their content type (`streamedBody`): at once when the declared length says so, else when a chunked
 * body's count passes it. Nothing more is read to answer: what the client still sends is dropped by the server
 * after the answer, within bounds (serveHttp), so an oversized upload costs the service little and the client
 * still reads its 413.
 */
export const bodyLimit = (max: number) => async (c: Context, next: Next) => {
  const type = mediaType(c);
  const own = matchedRoutes(c)
    .map((route) => declared.get(route.handler))
    .find((declaration) => declaration?.type === type);
  const length = c.req.header('content-length');
  if (length !== undefined && Number(length) > (own?.max ?? max)) throw new AppError('payload_too_large');
  // The body stream is only opened when it must be counted here: a body a route never reads (an early 401) is
  // left to the server to drop after the answer.
  const chunked = c.req.header('transfer-encoding') !== undefined;
  if (!chunked || own) return next();
  const reader = c.req.raw.body?.getReader();
  if (!reader) return next();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) throw new AppError('payload_too_large');
    chunks.push(value);
  }
  c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks) });
  return next();
};
