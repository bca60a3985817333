import type { Readable } from 'node:stream';
import { open, type FileHandle } from 'node:fs/promises';
import type { z } from '@hono/zod-openapi';
import { validate } from '../http/validation.js';
import type { CliIo, CliOption } from './types.js';

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

/** Why a path cannot be read, by the codes a mistyped or misplaced path gives. */
const UNREADABLE: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/**
 * The file of a `--<option> <path>` open for reading, and its size (standard input for `-`, size 0). A path that
 * cannot be read is a failed operation (exit 1) told in one line naming the option, the path and why.
 */
export async function openInput(io: CliIo, option: string, path: string): Promise<{ input: Readable; size: number; bytesRead: () => number }> {
  // Standard input's size is unknown, so is how far through it a read is.
  if (path === '-') return { input: io.stdin, size: 0, bytesRead: () => 0 };
  const unreadable = (why: string) => new Error(`Cannot read --${option} ${path}: ${why}.`);
  let file: FileHandle;
  try {
    file = await open(path);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw unreadable(UNREADABLE[code ?? ''] ?? message);
  }
  const info = await file.stat();
  // Opening a directory succeeds; reading it would fail half-way.
  if (info.isDirectory()) {
    await file.close();
    throw unreadable(UNREADABLE.EISDIR!);
  }
  const input = file.createReadStream();
  return { input, size: info.size, bytesRead: () => input.bytesRead };
}

/** The text of a `--<option> <path>` (a body, credentials), or standard input's for `-`. */
export async function readAll(io: CliIo, option: string, path: string): Promise<string> {
  const { input } = await openInput(io, option, path);
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(chunk as Buffer);
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
