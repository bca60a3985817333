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

  it('take a value out only where PostgreSQL quotes it, so a constraint named like a value stays named', async () => {
    // A value of two characters is quoted too, and taken out.
    const statement = builtStatement<'kind' | 'short'>(
      (slot) => sql`select ${slot('kind')}::text as kind, ${slot('short')}::int as n`,
    );
    const failed = await statement(app.services.db, { kind: 'top_up', short: 'ab' }).then(() => null, (err: unknown) => err);
    expect(serializeError(failed)).toMatchObject({ code: '22P02', message: 'invalid input syntax for type integer: "[redacted]"' });
    // A parameter "top_up" (a product kind) and a refused row of the table whose check is top_up_services_cap_ck.
    const named = Object.assign(new Error('new row for relation "top_up_services" violates check constraint "top_up_services_cap_ck"'), {
      query: 'update top_up_services set offered_sell = offered_sell + $2 where kind = $1',
      parameters: ['top_up', '1'],
    });
    expect(serializeError(named).message).toBe('new row for relation "top_up_services" violates check constraint "top_up_services_cap_ck"');
  });
});

