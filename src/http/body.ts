import type { Context } from 'hono';
import { AppError } from '../errors.js';

/**
 * Reads a JSON, form-encoded or multipart body into a plain object (C5: write endpoints take all three).
 * `key[]` form fields become arrays under `key`. An empty body reads as {}.
 * Malformed JSON and other content types answer 400 before anything is validated.
 */
export async function readBody(c: Context): Promise<Record<string, unknown>> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const text = type.startsWith('multipart/') ? null : await c.req.text();
  if (text !== null && text.trim() === '') return {};
  if (type === 'application/json' || type.endsWith('+json') || (type === '' && text !== null)) {
    try {
      const parsed: unknown = JSON.parse(text!);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      return parsed as Record<string, unknown>;
    } catch {
      throw new AppError('bad_request', 'The request body is not a valid JSON object.');
    }
  }
  if (type === 'application/x-www-form-urlencoded') return fromEntries(new URLSearchParams(text!).entries());
  if (type.startsWith('multipart/form-data')) {
    try {
      const form = await c.req.formData();
      return fromEntries(
        [...form.entries()].flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as [string, string]] : [])),
      );
    } catch {
      throw new AppError('bad_request', 'The multipart body could not be read.');
    }
  }
  throw new AppError('unsupported_media_type');
}

function fromEntries(entries: Iterable<[string, string]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of entries) {
    const isList = /\[\d*\]$/.test(rawKey);
    const key = rawKey.replace(/\[\d*\]$/, '');
    if (isList) {
      const list = Array.isArray(out[key]) ? (out[key] as unknown[]) : [];
      list.push(value);
      out[key] = list;
    } else {
      out[key] = value;
    }
  }
  return out;
}
