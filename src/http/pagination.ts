import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import { baseUrl } from './urls.js';

export type PageRequest = { page: number; perPage: number };

export const pageOffset = ({ page, perPage }: PageRequest) => (page - 1) * perPage;

/** Reads `page` and `per_page` (C11): defaults to page 1 and `defaultPerPage`, per_page capped at 100. */
export function pageRequest(query: { page?: number; per_page?: number }, defaultPerPage: number): PageRequest {
  return { page: query.page ?? 1, perPage: Math.min(query.per_page ?? defaultPerPage, 100) };
}

function pageUrlBuilder(c: Context<AppEnv>) {
  const url = new URL(c.req.url);
  const path = `${baseUrl(c)}${url.pathname}`;
  return {
    path,
    at: (page: number) => {
      const params = new URLSearchParams(url.search);
      params.set('page', String(page));
      return `${path}?${params.toString()}`;
    },
  };
}

/** The Laravel-style page object of the spec (§2 Pagination objects), entries under `key`. */
export function pageObject<K extends 'items' | 'data', T>(
  c: Context<AppEnv>,
  key: K,
  entries: T[],
  total: number,
  { page, perPage }: PageRequest,
) {
  const urls = pageUrlBuilder(c);
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const from = entries.length ? (page - 1) * perPage + 1 : null;
  const links = [
    { url: page > 1 ? urls.at(page - 1) : null, label: '&laquo; Previous', active: false },
    ...Array.from({ length: lastPage }, (_, i) => ({ url: urls.at(i + 1), label: String(i + 1), active: i + 1 === page })),
    { url: page < lastPage ? urls.at(page + 1) : null, label: 'Next &raquo;', active: false },
  ];
  return {
    current_page: page,
    [key]: entries,
    first_page_url: urls.at(1),
    from,
    last_page: lastPage,
    last_page_url: urls.at(lastPage),
    links,
    next_page_url: page < lastPage ? urls.at(page + 1) : null,
    path: urls.path,
    per_page: perPage,
    prev_page_url: page > 1 ? urls.at(page - 1) : null,
    to: from === null ? null : from + entries.length - 1,
    total,
  } as unknown as { [P in K]: T[] } & Record<string, unknown>;
}

/** The review list `pagination` object (spec §2). */
export function reviewPagination(c: Context<AppEnv>, total: number, { page, perPage }: PageRequest) {
  const urls = pageUrlBuilder(c);
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  return {
    total,
    per_page: perPage,
    current_page: page,
    last_page: lastPage,
    next_page_url: page < lastPage ? urls.at(page + 1) : null,
    prev_page_url: page > 1 ? urls.at(page - 1) : null,
  };
}
