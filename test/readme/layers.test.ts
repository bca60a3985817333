import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

describe('docs/architecture.md', () => {
  it('names every layer rule that npm run check:layers enforces, and no other', async () => {
    const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: Array<{ name: string }> };
    const text = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
    // The rule table's first column: one rule, or several in one row.
    const documented = [...text.matchAll(/^\| (`[a-z-]+`(?:, `[a-z-]+`)*) \|/gm)].flatMap((row) => row[1]!.split(', ').map((name) => name.slice(1, -1)));
    expect(documented.sort()).toEqual(config.forbidden.map((rule) => rule.name).sort());
  });
});
