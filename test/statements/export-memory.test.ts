import { readFile, writeFile } from 'node:fs/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCluster } from '../helpers/cluster.js';
import { createTestDatabase } from '../helpers/harness.js';

/**
 * C24: a statement export is streamed, so a year of a busy account never sits in the API process's memory. The API
 * runs with its heap limited to HEAP_MB, far less than the export's entries would take held at once (a million rows
 * as objects, or their 74 MiB of text twice over as strings): it answers the whole export and stays up.
 */
const HEAP_MB = 96;
const ROWS = Number(process.env.EXPORT_ROWS ?? 1_000_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
let cluster: Awaited<ReturnType<typeof startCluster>>;
let accountId: number;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
  cluster = await startCluster({
    databaseUrl: database.url,
    redisUrl: inject('redisUrl'),
    workers: 0,
    env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
  });
  const response = await fetch(`${cluster.baseUrl}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${cluster.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ firstname: 'Busy', lastname: 'Reseller' }),
  });
  const account = ((await response.json()) as { message: { id: number } }).message;
  accountId = account!.id as number;
  await sql`
    insert into balance_ledger (account_id, amount, balance_after, kind, currency, reason, created_at)
    select ${accountId}, 1.00, g, 'deposit', 'USD', 'Top-up ' || g, now() - (${ROWS} - g) * interval '30 seconds'
    from generate_series(1, ${ROWS}) g`;
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
  await sql?.end({ timeout: 5 });
  await database?.drop();
});

/** Linux's view of a process: resident memory now, and its peak since the last reset. */
async function memory(pid: number) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const bytes = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: bytes('VmRSS'), peak: bytes('VmHWM') };
}

describe('a 1,000,000-entry statement as CSV', () => {
  it.runIf(process.platform === 'linux')(`streams from an API process whose heap is limited to ${HEAP_MB} MiB`, { timeout: 300_000 }, async () => {
    const url = `${cluster.baseUrl}/admin/accounts/${accountId}/statement?format=csv`;
    const headers = { Authorization: `Bearer ${cluster.adminToken}` };
    // Warm the path up, then take the baseline with the peak reset to the current size.
    expect((await fetch(`${url}&from=2100-01-01`, { headers })).status).toBe(200);
    const pid = cluster.api.process.pid!;
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    const before = await memory(pid);

    const response = await fetch(url, { headers });
    expect(response.status).toBe(200);
    let bytes = 0;
    let lines = 0;
    let last = '';
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      bytes += chunk.byteLength;
      const text = last + decoder.decode(chunk, { stream: true });
      const parts = text.split('\r\n');
      last = parts.pop()!;
      lines += parts.length;
    }
    expect(lines).toBe(ROWS + 1);
    const after = await memory(pid);
    const growth = after.peak - before.rss;
    console.log(`statement export: ${ROWS} entries, ${Math.round(bytes / 1024 / 1024)} MiB of CSV; API peak RSS grew by ${Math.round(growth / 1024 / 1024)} MiB`);
    expect(bytes).toBeGreaterThan(HEAP_MB * 1024 * 1024 * 0.7);
    cluster.api.ensureRunning();
    expect((await fetch(`${cluster.baseUrl}/health`)).status).toBe(200);
  });
});
