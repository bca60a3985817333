import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestAccount, expectFailure, tokenFor } from '../helpers/api.js';
import { createCard, createCategory, createTopUp } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';

let app: TestApp;
let api: ReturnType<typeof client>;
let cardCategoryId: number;

beforeAll(async () => {
  app = await startTestApp();
  api = client(app, await tokenFor(app, await createTestAccount(app)));
  const { db } = app.services;
  await createTopUp(db, { slug: 'hidden-game', status: 0 });
  await createTopUp(db, { slug: 'gone-game', deletedAt: '2026-01-01 00:00:00+00' });
  cardCategoryId = (await createCategory(db, { type: 'card' })).id;
});
afterAll(async () => app?.close());

describe('validation (422)', () => {
  it('requires the slug of top-up details', async () => {
    expect(await expectFailure(await api.get('/api/top-up/details'), 422)).toEqual(['The slug field is required.']);
    expect(await expectFailure(await api.get('/api/top-up/details?slug='), 422)).toEqual(['The slug field is required.']);
  });

  it('requires a positive integer card id for card details', async () => {
    expect(await expectFailure(await api.get('/api/card/details'), 422)).toEqual(['The card id field is required.']);
    for (const bad of ['abc', '-1', '0', '1.5']) {
      expect(await expectFailure(await api.get(`/api/card/details?card_id=${bad}`), 422)).toEqual([
        'The card id field must be a positive integer.',
      ]);
    }
  });

  it('refuses non-integer filters and pages', async () => {
    expect(await expectFailure(await api.get('/api/top-up/list?category_id=x'), 422)).toEqual([
      'The category id field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.get('/api/top-up/list?page=0&per_page=abc'), 422)).toEqual([
      'The page field must be a positive integer.',
      'The per page field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.get('/api/topup/services?top_up_id=x'), 422)).toEqual([
      'The top up id field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.get('/api/get-card?category_id=1.5'), 422)).toEqual([
      'The category id field must be a positive integer.',
    ]);
    expect(await expectFailure(await api.get('/api/card/services?card_id=-3'), 422)).toEqual([
      'The card id field must be a positive integer.',
    ]);
  });
});

describe('unknown resources (404)', () => {
  it('names the slug of an unknown, inactive or deleted top-up', async () => {
    for (const slug of ['no-such-game', 'hidden-game', 'gone-game']) {
      expect(await expectFailure(await api.get(`/api/top-up/details?slug=${slug}`), 404)).toBe(`No top-up with the slug "${slug}".`);
    }
  });

  it('names the id of an unknown or inactive card, also one past the id range', async () => {
    const inactive = await createCard(app.services.db, { status: 0 });
    for (const id of [999999, inactive.id, 2147483648]) {
      expect(await expectFailure(await api.get(`/api/card/details?card_id=${id}`), 404)).toBe(`No card with id ${id}.`);
      expect(await expectFailure(await api.get(`/api/card/services?card_id=${id}`), 404)).toBe(`No card with id ${id}.`);
      expect(await expectFailure(await api.get(`/api/card/review?card_id=${id}`), 404)).toBe(`No card with id ${id}.`);
    }
  });

  it('names the unknown ids of list filters', async () => {
    for (const id of [999999, 2147483648]) {
      expect(await expectFailure(await api.get(`/api/topup/services?top_up_id=${id}`), 404)).toBe(`No top-up with id ${id}.`);
      expect(await expectFailure(await api.get(`/api/topup/review?top_up_id=${id}`), 404)).toBe(`No top-up with id ${id}.`);
      expect(await expectFailure(await api.get(`/api/top-up/list?category_id=${id}`), 404)).toBe(`No top-up category with id ${id}.`);
      expect(await expectFailure(await api.get(`/api/get-card?category_id=${id}`), 404)).toBe(`No card category with id ${id}.`);
    }
    // A card category is not a top-up category.
    expect(await expectFailure(await api.get(`/api/top-up/list?category_id=${cardCategoryId}`), 404)).toBe(`No top-up category with id ${cardCategoryId}.`);
  });
});

describe('authentication (401)', () => {
  const paths = [
    '/api/get-category',
    '/api/top-up/list',
    '/api/top-up/details?slug=hidden-game',
    '/api/topup/services',
    '/api/get-card',
    '/api/card/details?card_id=1',
    '/api/card/services',
    '/api/get-campaign',
  ];
  it('refuses every catalog endpoint without a valid token', async () => {
    for (const path of paths) {
      expect(await expectFailure(await app.request(path), 401)).toBe('Unauthenticated.');
      expect(await expectFailure(await app.request(path, { headers: { Authorization: 'Bearer nope' } }), 401)).toBe('Unauthenticated.');
    }
  });
});

describe('documentation', () => {
  it('documents the catalog and review routes with their query parameters in openapi.json', async () => {
    const response = await app.request('/openapi.json');
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>> };
    for (const path of ['/api/get-category', '/api/top-up/list', '/api/top-up/details', '/api/get-campaign', '/api/card/details']) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    expect(doc.paths['/api/top-up/list']!.get!.parameters!.map((p) => p.name)).toEqual(['category_id', 'page', 'per_page']);
    expect(doc.paths['/api/topup/review']?.post).toBeDefined();
  });
});
