import type { Redis } from 'ioredis';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyer, expectJson } from '../helpers/api.js';
import { createCard, createCategory, shiftDays } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { cliEnvOf, cliJson, runCli } from '../helpers/cli.js';
import { CATEGORY_KEYS, CARD_DETAIL_KEYS, expectKeys } from '../catalog/shapes.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

/** `npm run cli -- …` on the test app's database and Redis, for a store whose public base URL is set. */
const cli = (args: string[]) => runCli(args, cliEnvOf(app, { PUBLIC_BASE_URL: 'https://store.example.com' }));
const json = cliJson;

describe('store commands', () => {
  it('create and change resources from --json or --file, printed as the API answers; API processes drop their catalog cache', async () => {
    // What an API process listens to: the command's change tells every process to drop its catalog cache.
    const listener = (app.services.redis as Redis).duplicate();
    const heard: string[] = [];
    listener.on('message', (channel) => heard.push(channel));
    await listener.subscribe(`${app.services.config.BULLMQ_PREFIX}:catalog-changed`);
    const category = json(await cli(['store:categories:create', '--json', '{"name":"Gift cards","type":"card"}']));
    expectKeys(category, CATEGORY_KEYS);
    expect(category).toMatchObject({ name: 'Gift cards', type: 'card', active_children: 0 });
    await expect.poll(() => heard.length).toBe(1);
    listener.disconnect();
    const { api } = await buyer(app);
    expect((await expectJson(await api.get('/api/get-category'), 200)).message.categories).toContainEqual(category);

    const file = join(await mkdtemp(join(tmpdir(), 'store-')), 'card.json');
    await writeFile(file, JSON.stringify({ category_id: category.id, name: 'Arcade Card', note: 'Codes by email' }));
    const card = json(await cli(['store:cards:create', '--file', file]));
    expectKeys(card, CARD_DETAIL_KEYS);
    expect(card).toMatchObject({ category_id: category.id, slug: 'arcade-card', note: 'Codes by email', product_image: '' });

    const topUps = await createCategory(app.services.db, { type: 'top_up' });
    const topUp = json(await cli(['store:top-ups:create', '--json', JSON.stringify({ category_id: topUps.id, name: 'Moon Run', region: 'Asia', order_information: [] })]));
    // Links as a client of PUBLIC_BASE_URL sees them.
    expect(topUp).toMatchObject({ slug: 'moon-run', order_information: {}, top_up_detail_route: 'https://store.example.com/api/top-up/details?slug=moon-run' });

    const service = json(await cli(['store:card-services:create', String(card.id), '--json', '{"name":"$5","price":"5.00","low_stock_threshold":10}']));
    expect(service).toMatchObject({ card_id: card.id, price: 5, low_stock_threshold: 10, image_path: '' });
    expect(json(await cli(['store:card-services:update', String(service.id), '--json', '{"status":0}'])).status).toBe(0);

    const campaign = json(
      await cli([
        'store:campaigns:create',
        '--json',
        JSON.stringify({ name: 'Flash', start_date: shiftDays(0), end_date: shiftDays(1), card_services: [{ id: service.id, price: '4.00', max_sell: 3 }] }),
      ]),
    );
    expect(campaign.cards).toEqual([expect.objectContaining({ id: service.id, price: 4, campaign_data: expect.objectContaining({ max_sell: '3' }) })]);
    const ended = json(await cli(['store:campaigns:end', String(campaign.id)]));
    expect(ended).toMatchObject({ status: 0, cards: [expect.objectContaining({ price: 5, campaign_data: null })] });
  });

  it('refuses what the API refuses, with its messages, and writes nothing', async () => {
    const category = await createCategory(app.services.db, { type: 'top_up' });
    const before = await app.services.sql`select count(*)::int as n from cards`;
    const wrongType = await cli(['store:cards:create', '--json', JSON.stringify({ category_id: category.id, name: 'Nope' })]);
    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toContain('The category id field must name a card category.');
    const invalid = await cli(['store:cards:create', '--json', '{"name":""}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('The category id field is required.\nThe name field is required.');
    const unreadable = await cli(['store:cards:create', '--json', '{"name":']);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain('The body is not a valid JSON object.');
    const noBody = await cli(['store:cards:create']);
    expect(noBody.code).toBe(1);
    expect(noBody.stderr).toContain('Give the body with either --json <body> or --file <path>.');
    expect(await app.services.sql`select count(*)::int as n from cards`).toEqual(before);

    const card = await createCard(app.services.db);
    const unknown = await cli(['store:cards:update', String(card.id + 1000), '--json', '{"status":0}']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`No card with id ${card.id + 1000}.\n`);
    const usage = await cli(['store:cards:update', 'abc', '--json', '{}']);
    expect(usage.code).toBe(2);
  });
});
