import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/**
 * JSON lines on stderr (pino), so stdout stays clean for CLI output (`seed --json`).
 * Call as pino does: `logger.info({ utr }, 'order completed')`; an error goes under `err`.
 */
export type Logger = PinoLogger;
/** Where log lines are written: anything with `write(line)`. */
export type LogDestination = DestinationStream;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

type LoggedError = { type: string; message: string; code?: string; constraint?: string; stack?: string; cause?: LoggedError };

/**
 * What a log line keeps of an error: its kind, message, code, stack frames and cause chain. Query
 * parameters are left out, also where PostgreSQL quotes one in its message (`invalid input syntax …:
 * "<value>"`), and so is PostgreSQL's `detail`: they hold digests, order-form values and other client data. A value
 * is taken out where it is quoted, never out of the middle of a word: a parameter `top_up` leaves the constraint
 * `top_up_services_cap_ck` named.
 */
export function serializeError(err: unknown, quoted: string[] = [], depth = 0): LoggedError {
  if (!(err instanceof Error)) return { type: typeof err, message: scrubQuoted(String(err), quoted) };
  const fields = err as Error & { query?: unknown; params?: unknown; parameters?: unknown; code?: unknown; constraint_name?: unknown };
  // drizzle's "Failed query: <sql>\nparams: <values>": the statement stays, the values go.
  const isQuery = typeof fields.query === 'string' && Array.isArray(fields.params);
  // The driver's own error (a statement sent straight to it) names its statement and values too: the values go.
  const values = isQuery ? fields.params : typeof fields.query === 'string' && Array.isArray(fields.parameters) ? fields.parameters : [];
  const secrets = [...quoted, ...(values as unknown[]).filter((p): p is string => typeof p === 'string')];
  const frames = err.stack?.split('\n').filter((line) => /^\s+at /.test(line)).join('\n');
  return {
    type: err.name,
    message: isQuery ? `Failed query: ${fields.query as string}` : scrubQuoted(err.message, secrets),
    ...(typeof fields.code === 'string' ? { code: fields.code } : {}),
    ...(typeof fields.constraint_name === 'string' ? { constraint: fields.constraint_name } : {}),
    ...(frames ? { stack: frames } : {}),
    ...(err.cause !== undefined && depth < 5 ? { cause: serializeError(err.cause, secrets, depth + 1) } : {}),
  };
}

/** `"<value>"` becomes `"[redacted]"` for each value, as PostgreSQL quotes the values it names in a message. */
const scrubQuoted = (text: string, values: string[]) => values.reduce((out, value) => out.split(`"${value}"`).join('"[redacted]"'), text);

/**
 * `destination`: where the lines go (stderr unless a caller, such as a test, collects them). Stderr is written
 * asynchronously: a synchronous write per request line put a system call on every request's path, while lines
 * written meanwhile now go out together. What is still buffered is written when the process exits (pino flushes
 * on exit), so the last lines before `process.exit` are kept; only a SIGKILL can lose the lines of that moment.
 */
export function createLogger(level: LogLevel, destination: LogDestination = pino.destination({ dest: 2, sync: false })): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: (err: unknown) => serializeError(err) },
    },
    destination,
  );
}

/**
 * An 'error' listener for a connection that retries by itself (Redis, BullMQ): one warning when the
 * trouble starts, then at most one every `everyMs` with how many were held back, instead of one per
 * reconnect attempt.
 */
export function connectionErrors(logger: Logger, fields: Record<string, unknown>, msg: string, everyMs = 30_000) {
  let lastLogged = 0;
  let heldBack = 0;
  return (err: unknown) => {
    const now = Date.now();
    if (now - lastLogged < everyMs) {
      heldBack += 1;
      return;
    }
    logger.warn({ ...fields, err, ...(heldBack ? { repeated: heldBack } : {}) }, msg);
    lastLogged = now;
    heldBack = 0;
  };
}
