import { validationError } from '../core/errors.js';

/**
 * PostgreSQL gives up one of two transactions that wait on each other (deadlock_detected, 40P01) or that
 * cannot both be serialised (40001); the one given up changed nothing and succeeds when run again.
 */
const RETRYABLE = new Set(['40P01', '40001']);

function isRetryable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (RETRYABLE.has((e as { code?: string }).code ?? '')) return true;
  }
  return false;
}

/** Runs `work` (one statement or one transaction) again when PostgreSQL gave it up for a conflict, a few times. */
export async function retryingConflicts<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
    }
  }
}

/**
 * Runs `write`; when a unique index named in `taken` refuses it, that is the validation failure of its field (422),
 * with the message given for the index: the index decides, so two concurrent writes of one value cannot both pass.
 */
export async function refusedWhenTaken<T>(write: Promise<T>, taken: Record<string, string>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
      const pg = e as { code?: string; constraint_name?: string };
      const message = pg.code === '23505' ? taken[pg.constraint_name ?? ''] : undefined;
      if (message) throw validationError([message]);
    }
    throw err;
  }
}
