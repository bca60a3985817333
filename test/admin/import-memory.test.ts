import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { LIMITS } from '../../src/http/server.js';
import { chunkedBody, expectJson } from '../helpers/api.js';
import { startCluster } from '../helpers/cluster.js';
import { createCardService } from '../helpers/fixtures.js';
import { createTestDatabase } from '../helpers/harness.js';

describe('a 100 MiB upload to the service in its own process', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Database;
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = connectDatabase(database.url, { max: 2 });
    cluster = await startCluster({ databaseUrl: database.url, redisUrl: inject('redisUrl'), workers: 1 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await db?.close();
    await database?.drop();
  });

  /** Linux's view of the API process: resident memory now, and its peak since the last reset. */
  const memory = async (pid: number) => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
    return { rss: kib('VmRSS'), peak: kib('VmHWM') };
  };

  it.runIf(process.platform === 'linux')('streams: the peak memory of the API process grows far less than the body', { timeout: 300_000 }, async () => {
    const { serviceId } = await createCardService(db.db);
    const post = (body: BodyInit) =>
      fetch(`${cluster.baseUrl}/admin/card-services/${serviceId}/codes`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${cluster.adminToken}`, 'Content-Type': 'text/plain' },
        body,
        duplex: 'half',
      } as RequestInit);
    // Warm up the import path, then take the baseline with the peak reset to the current size.
    expect((await post('WARM-1\nWARM-2\n')).status).toBe(200);
    const pid = cluster.api.process.pid!;
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    const before = await memory(pid);

    // Codes of the longest allowed length, one per line: just under the 100 MiB cap.
    const line = (i: number) => `${`BIG-${i}-`.padEnd(500, 'Q')}\n`;
    const total = Math.floor(LIMITS.MAX_UPLOAD_BYTES / line(0).length);
    let next = 0;
    const body = chunkedBody(() => {
      if (next >= total) return null;
      const end = Math.min(total, next + 128);
      let text = '';
      for (; next < end; next++) text += line(next);
      return text;
    });
    const answer = await expectJson(await post(body), 200);
    expect(answer.message).toEqual({ added: total, skipped: 0, fulfilled_orders: 0 });
    expect(total * line(0).length).toBeGreaterThan(100 * 1000 * 1000);

    const after = await memory(pid);
    const growth = after.peak - before.rss;
    expect(growth, `peak RSS grew by ${Math.round(growth / 1024 / 1024)} MiB`).toBeLessThan(60 * 1024 * 1024);
    const [row] = await db.sql`select count(*)::int as n from card_codes where card_service_id = ${serviceId}`;
    expect(row!.n).toBe(total + 2);
  });
});
