import type { Context, MiddlewareHandler, Next } from 'hono';
import { matchedRoutes } from 'hono/route';
import { AppError } from '../core/errors.js';

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
 * body's count passes it as it is read. Nothing is read here: a body is read by the route that takes it, after the
 * credentials in its headers were checked, so a request that fails them costs no more than its headers; what the
 * client still sends is dropped by the server after the answer, within bounds (serveHttp), so an oversized upload
 * costs the service little and the client still reads its 413.
 */
export const bodyLimit = (max: number) => async (c: Context, next: Next) => {
  const type = mediaType(c);
  const own = matchedRoutes(c)
    .map((route) => declared.get(route.handler))
    .find((declaration) => declaration?.type === type);
  const length = c.req.header('content-length');
  if (length !== undefined && Number(length) > (own?.max ?? max)) throw new AppError('payload_too_large');
  // Only a chunked body is looked at: reading `body` turns the server's light request into a whole Fetch Request
  // (an AbortController, a Headers copy, a stream), which cost every request of the API a tenth of its CPU.
  if (c.req.header('transfer-encoding') === undefined || own) return next();
  const body = c.req.raw.body;
  if (!body) return next();
  // Counted as it is read: the reader gets the 413 once the body passes the limit.
  let size = 0;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > max) controller.error(new AppError('payload_too_large'));
        else controller.enqueue(chunk);
      },
    }),
  );
  c.req.raw = new Request(c.req.raw, { body: counted, duplex: 'half' } as RequestInit);
  return next();
};
