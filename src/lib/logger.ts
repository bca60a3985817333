/** One JSON line per event on stderr, so stdout stays clean for CLI output (`seed --json`). */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;
export type Logger = Record<Exclude<LogLevel, 'silent'>, (msg: string, fields?: Record<string, unknown>) => void>;

export function createLogger(level: LogLevel): Logger {
  const write = (at: Exclude<LogLevel, 'silent'>) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[at] < LEVELS[level]) return;
    const err = fields.err instanceof Error ? { err: { message: fields.err.message, stack: fields.err.stack } } : {};
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields, ...err })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
