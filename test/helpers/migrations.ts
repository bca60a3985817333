import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { inject } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../src/db/migrate.js';

/** The committed migrations before `count`, as the previous version shipped them. */
export async function previousMigrations(count: number): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'migrations-'));
  await mkdir(join(folder, 'meta'));
  const journal = JSON.parse(await readFile(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ idx: number; tag: string }> };
  journal.entries = journal.entries.filter((entry) => entry.idx < count);
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const file of await readdir(MIGRATIONS_FOLDER)) {
    if (journal.entries.some((entry) => file === `${entry.tag}.sql`)) await copyFile(join(MIGRATIONS_FOLDER, file), join(folder, file));
  }
  return folder;
}

/** The URL of a new, empty database on the test server, and its drop. */
export async function emptyDatabase() {
  const server = new URL(inject('templateDatabaseUrl'));
  const name = `topup_migrate_${randomBytes(5).toString('hex')}`;
  const admin = postgres(Object.assign(new URL(server), { pathname: '/postgres' }).toString(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  return {
    url: Object.assign(new URL(server), { pathname: `/${name}` }).toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
