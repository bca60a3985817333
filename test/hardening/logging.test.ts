import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtStatement } from '../../src/db/client.js';
import { serializeError } from '../../src/lib/logger.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

describe('error log lines', () => {
  it("keep PostgreSQL's cause and leave the query parameters out", async () => {
    const secret = 'order-form-value-4711';
    const failed = await app.services.db
      .execute(sql`select ${secret}::int as n`)
      .then(() => null, (err: unknown) => err);
    expect(failed).toBeInstanceOf(Error);
    const logged = JSON.stringify(serializeError(failed));
    expect(logged).not.toContain(secret);
    const line = serializeError(failed);
    expect(line.message).toMatch(/^Failed query: select \$1::int as n$/);
    expect(line.cause).toMatchObject({ code: '22P02', message: expect.stringContaining('invalid input syntax for type integer') });
  });

  it('leave the values out of the error of a statement sent straight to the driver', async () => {
    const secret = 'order-form-value-4712';
    const statement = builtStatement<'n'>((slot) => sql`select ${slot('n')}::int as n`);
    const failed = await statement(app.services.db, { n: secret }).then(() => null, (err: unknown) => err);
    expect(failed).toBeInstanceOf(Error);
    const line = serializeError(failed);
    expect(JSON.stringify(line)).not.toContain(secret);
    expect(line).toMatchObject({ code: '22P02', message: 'invalid input syntax for type integer: "[redacted]"' });
  });
});
