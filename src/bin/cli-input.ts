import { readFile } from 'node:fs/promises';
import type { z } from '@hono/zod-openapi';
import { validate } from '../http/validation.js';
import type { CliOption } from './cli-types.js';

/**
 * Command options as the API's input, validated by the same schema as the API (so the CLI refuses what the
 * API refuses, with the same messages): `--per-page 5` → `{per_page: '5'}`, a flag → `true`, and the options
 * named in `lists` split at commas (`--tags a,b` → `['a', 'b']`).
 */
export function optionsInput<S extends z.ZodType>(schema: S, options: Record<string, string | true>, lists: readonly string[] = []): z.output<S> {
  const input = Object.fromEntries(
    Object.entries(options).map(([name, value]) => [
      name.replace(/-/g, '_'),
      typeof value === 'string' && lists.includes(name) ? value.split(',').map((part) => part.trim()).filter(Boolean) : value,
    ]),
  );
  return validate(schema, input);
}

/** The page options of a listing command (the API's `page` and `per_page`). */
export const pageOptions = (things: string, perPage: number): CliOption[] => [
  { name: 'page', value: '<n>', description: 'page number (default 1)' },
  { name: 'per-page', value: '<n>', description: `${things} per page (default ${perPage}, at most 100)` },
];

/** A file's text, or standard input's for `-` (the `--file` of the commands that take a body). */
export async function readAll(path: string): Promise<string> {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A `--json` or `--file` body as the JSON object or list its command takes; anything else is refused in one line. */
export function jsonBody(text: string, shape: 'object' | 'list'): unknown {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // refused below
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) !== (shape === 'list')) throw new Error(`The body is not a valid JSON ${shape}.`);
  return parsed;
}
