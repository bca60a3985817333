import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCode } from '../../src/modules/inventory/codes.js';
import { seedCatalog } from '../../src/seed/catalog.js';
import { client, createTestAccount, expectJson, tokenFor, type Json } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  app = await startTestApp();
  const { db, config } = app.services;
  await db.transaction((tx) => seedCatalog(tx, config));
  api = client(app, await tokenFor(app, await createTestAccount(app)));
});
afterAll(async () => app?.close());

const get = async (path: string) => (await expectJson(await api.get(path), 200)).message;

describe('demo catalog (C14)', () => {
  it('has categories of both kinds, each with products', async () => {
    const { categories } = await get('/api/get-category');
    for (const type of ['top_up', 'card']) {
      const ofType = categories.filter((c: Json) => c.type === type);
      expect(ofType.length).toBeGreaterThanOrEqual(2);
      for (const c of ofType) expect(c.active_children).toBeGreaterThan(0);
    }
  });

  it('has top-ups with text and select order fields and several services each', async () => {
    const { items } = await get('/api/top-up/list');
    expect(items.length).toBeGreaterThanOrEqual(3);
    for (const topUp of items) {
      const fields = Object.values(topUp.order_information) as Json[];
      expect(fields.map((f) => f.field_type)).toEqual(expect.arrayContaining(['text', 'select']));
      for (const f of fields.filter((x) => x.field_type === 'select')) expect(Object.keys(f.option).length).toBeGreaterThan(1);
      expect(topUp.services.length).toBeGreaterThanOrEqual(3);
      expect(topUp.image.image).toMatch(/^topups\/.+\.webp$/);
    }
  });

  it('has cards with 2–4 services whose active services hold 20–200 readable codes', async () => {
    const { cards } = await get('/api/get-card');
    expect(cards.length).toBeGreaterThanOrEqual(3);
    const stock = await app.services.sql<{ card_service_id: number; n: number }[]>`
      select card_service_id, count(*)::int as n from card_codes group by card_service_id`;
    const counts = new Map(stock.map((r) => [r.card_service_id, r.n]));
    for (const card of cards) {
      const { services } = await get(`/api/card/details?card_id=${card.id}`);
      expect(services.length).toBeGreaterThanOrEqual(2);
      expect(services.length).toBeLessThanOrEqual(4);
      for (const s of services) {
        expect(counts.get(s.id)).toBeGreaterThanOrEqual(20);
        expect(counts.get(s.id)).toBeLessThanOrEqual(200);
      }
    }
    const [sample] = await app.services.sql`select code_encrypted from card_codes limit 1`;
    expect(openCode(app.services.config.codeEncryptionKey, Buffer.from(sample!.code_encrypted))).toMatch(/^[A-Z]{4}-[0-9A-F]{4}-/);
    const outside = await app.services.sql`select count(*)::int as n from card_services where is_offered = 0 and status = 1`;
    expect(outside[0]!.n).toBeGreaterThan(0);
  });

  it('runs a campaign around today with capped card and top-up services already applied', async () => {
    const { campaign } = await get('/api/get-campaign');
    expect(campaign).not.toBeNull();
    const today = new Date().toISOString().slice(0, 10);
    expect(campaign.start_date < today && today < campaign.end_date).toBe(true);
    expect(campaign.topups.length).toBeGreaterThanOrEqual(1);
    expect(campaign.cards.length).toBeGreaterThanOrEqual(1);
    for (const s of [...campaign.topups, ...campaign.cards]) {
      expect(s.max_sell).toBeGreaterThan(0);
      expect(s.max_sell).toBeLessThanOrEqual(100);
      expect(s.old_data).toMatchObject({ price: expect.any(String), discount: expect.any(String) });
      expect(s.campaign_data).toEqual({
        price: s.price.toFixed(2),
        discount: s.discount.toFixed(2),
        discount_type: s.discount_type,
        max_sell: String(s.max_sell),
      });
    }
  });

  it('has gateways and published reviews counted on their products', async () => {
    const { items } = await get('/api/top-up/list');
    const pubg = items.find((t: Json) => t.slug === 'pubg-mobile');
    const details = await get(`/api/top-up/details?slug=${pubg.slug}`);
    expect(details.gateways.length).toBeGreaterThanOrEqual(2);
    const { reviews } = details.reviewStatic;
    expect(reviews.length).toBe(pubg.total_review);
    expect(reviews.length).toBeGreaterThanOrEqual(2);
    const average = reviews.reduce((sum: number, r: Json) => sum + r.rating, 0) / reviews.length;
    expect(pubg.avg_rating).toBeCloseTo(average, 2);
    for (const r of reviews) expect(r.user.email).toMatch(/^[a-z]\*\*\*@example\.com$/);
  });
});
