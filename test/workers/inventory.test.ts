import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { fulfilCardOrder } from '../../src/modules/fulfilment/cards.js';
import { openCode } from '../../src/modules/inventory/codes.js';
import { addCodes, stockOf } from '../../src/modules/inventory/service.js';
import { createCard } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer, orderState, placeCardOrder, type Buyer } from './support.js';

let app: TestApp;
let buyer: Buyer;
const add = (serviceId: number, codes: string[]) => addCodes(app.services.db, app.services.config.codeEncryptionKey, serviceId, codes);

beforeAll(async () => {
  app = await startTestApp();
  buyer = await createBuyer(app);
});
afterAll(() => app.close());

describe('inventory', () => {
  it('stores trimmed codes sealed, dropping blanks and skipping duplicates', async () => {
    const card = await createCard(app.services.db);
    const serviceId = card.services[0]!.id;
    expect(await add(serviceId, ['  AAAA-1111 ', 'BBBB-2222', '', '   ', 'AAAA-1111'])).toEqual({ added: 2, skipped: 1 });
    expect(await add(serviceId, ['BBBB-2222', 'CCCC-3333'])).toEqual({ added: 1, skipped: 1 });

    const rows = await app.services.db.execute<{ code_encrypted: Buffer }>(
      sql`select code_encrypted from card_codes where card_service_id = ${serviceId} order by id`,
    );
    expect(rows.map((r) => openCode(app.services.config.codeEncryptionKey, r.code_encrypted))).toEqual([
      'AAAA-1111',
      'BBBB-2222',
      'CCCC-3333',
    ]);
    for (const row of rows) expect(row.code_encrypted.toString('latin1')).not.toContain('-1111');
    expect(await stockOf(app.services.db, serviceId)).toEqual({ available: 3, reserved_for_stock_short: 0 });
  });

  it('the same code may be stocked for two different services', async () => {
    const card = await createCard(app.services.db, { services: [{}, {}] });
    expect(await add(card.services[0]!.id, ['SHARED-1'])).toEqual({ added: 1, skipped: 0 });
    expect(await add(card.services[1]!.id, ['SHARED-1'])).toEqual({ added: 1, skipped: 0 });
  });

  it('concurrent imports of the same codes store each code once', async () => {
    const card = await createCard(app.services.db);
    const codes = Array.from({ length: 50 }, (_, i) => `RACE-${i}`);
    const results = await Promise.all(Array.from({ length: 4 }, () => add(card.services[0]!.id, codes)));
    expect(results.reduce((sum, r) => sum + r.added, 0)).toBe(50);
    expect(results.reduce((sum, r) => sum + r.skipped, 0)).toBe(150);
    expect((await stockOf(app.services.db, card.services[0]!.id)).available).toBe(50);
  });

  it('reports the codes owed to stock_short orders of the service', async () => {
    const card = await createCard(app.services.db);
    const serviceId = card.services[0]!.id;
    await add(serviceId, ['ONE']);
    const utr = await placeCardOrder(buyer, [[serviceId, 4]]);
    expect(await fulfilCardOrder(app.services.db, (await orderState(app.services.db, utr)).id)).toBe('stock_short');
    expect(await stockOf(app.services.db, serviceId)).toEqual({ available: 0, reserved_for_stock_short: 3 });
  });

  it('unknown services are not_found and nothing is written', async () => {
    // Thunks: each call starts only once its rejection is awaited, so none goes unhandled meanwhile.
    for (const call of [() => add(999_999, ['X']), () => stockOf(app.services.db, 999_999)]) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('not_found');
    }
    const [row] = await app.services.db.execute<{ n: number }>(sql`select count(*)::int as n from card_codes where card_service_id = 999999`);
    expect(row!.n).toBe(0);
  });
});
