import { ASSETS_PATH } from './urls.js';

/**
 * What the examples of /openapi.json share: the demo store (src/demo/) as a client of
 * https://store.example.com sees it, in a fresh installation (so ids follow the demo data's order).
 */
export const EXAMPLE_BASE_URL = 'https://store.example.com';
export const EXAMPLE_TIMESTAMP = '2026-11-23T07:40:12.123456Z';
/** The store currency of the examples (STORE_CURRENCY's default). */
export const EXAMPLE_CURRENCY = { currency: 'USD', symbol: '$' } as const;

/** The URL a client is given for a stored file path. */
export const exampleAsset = (path: string) => `${EXAMPLE_BASE_URL}${ASSETS_PATH}/${path}`;

/** A list of one page at `path` (spec §2 Pagination objects), with `entries` under `key`. */
export function examplePage<K extends 'items' | 'data', T>(path: string, key: K, entries: T[], perPage = 10) {
  const url = `${EXAMPLE_BASE_URL}${path}`;
  const first = `${url}?page=1`;
  return {
    current_page: 1,
    [key]: entries,
    first_page_url: first,
    from: 1,
    last_page: 1,
    last_page_url: first,
    links: [
      { url: null, label: '&laquo; Previous', active: false },
      { url: first, label: '1', active: true },
      { url: null, label: 'Next &raquo;', active: false },
    ],
    next_page_url: null,
    path: url,
    per_page: perPage,
    prev_page_url: null,
    to: entries.length,
    total: entries.length,
  };
}
