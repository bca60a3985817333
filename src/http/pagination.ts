import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import type { PageRequest } from '../lib/paging.js';
import { baseUrl } from './urls.js';


/** The URLs of a list's pages: its path, and a page's URL (with the list's keyset cursor, if any). */
export type PageUrls = { path: string; at: (page: number, after?: string) => string };

/**
 * The URL of a page of the list at `url` (the request's URL) on the server at `base`: the request's own query with
 * `page` set. `after` (the order lists' keyset cursor) goes only where it is given: a link to any other page counts
 * from the first entry.
 */
export function pageUrlsAt(base: string, url: URL): PageUrls {
  const path = `${base}${url.pathname}`;
  return {
    path,
    at: (page, after) => {
      const params = new URLSearchParams(url.search);
      params.set('page', String(page));
      if (after === undefined) params.delete('after');
      else params.set('after', after);
      return `${path}?${params.toString()}`;
    },
  };
}

const pageUrlBuilder = (c: Context<AppEnv>) => pageUrlsAt(baseUrl(c), new URL(c.req.url));

/** Pages on each side of the current one, as Laravel's paginator (`onEachSide = 3`). */
const ON_EACH_SIDE = 3;

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The page numbers of `links`, with null for a `...` gap, as Laravel's UrlWindow bounds them (C11):
 * every page when there are few; otherwise the first pages, a window around the current one and the
 * last pages, so the list stays short however many pages there are.
 */
export function pageWindow(page: number, lastPage: number): Array<number | null> {
  if (lastPage < ON_EACH_SIDE * 2 + 8) return range(1, lastPage);
  const window = ON_EACH_SIDE + 4;
  const start = [1, 2];
  const finish = [lastPage - 1, lastPage];
  if (page <= window) return [...range(1, window + ON_EACH_SIDE), null, ...finish];
  if (page > lastPage - window) return [...start, null, ...range(lastPage - (window + ON_EACH_SIDE - 1), lastPage)];
  return [...start, null, ...range(page - ON_EACH_SIDE, page + ON_EACH_SIDE), null, ...finish];
}

/** The Laravel-style page object of the spec (§2 Pagination objects), entries under `key`. */
export function pageObject<K extends 'items' | 'data', T>(c: Context<AppEnv>, key: K, entries: T[], total: number, page: PageRequest) {
  return pageObjectAround(pageUrlBuilder(c), key, entries, entries.length, total, page) as unknown as { [P in K]: T[] } & Record<string, unknown>;
}

/** Stands in for the entries of pageObjectShell until they are spliced in (JSON.stringify escapes it: "\u0001"). */
const ENTRIES_MARK = '\u0001';

/**
 * The JSON text of a page object whose entries are already JSON text (an array of `count` of them, written by the
 * database), as the function that writes them in: the object is serialised once around a mark and split there, so a
 * page read again with the same total and last entry needs no new links. `nextAfter`: the cursor the next page's URL
 * carries (keyset paging), if the list has one.
 */
export function pageObjectShell(urls: PageUrls, key: 'items' | 'data', count: number, total: number, page: PageRequest, nextAfter?: string): (entries: string) => string {
  const text = JSON.stringify(pageObjectAround(urls, key, ENTRIES_MARK, count, total, page, nextAfter));
  const mark = `"${key}":${JSON.stringify(ENTRIES_MARK)}`;
  const at = text.indexOf(mark);
  const head = `${text.slice(0, at)}"${key}":`;
  const tail = text.slice(at + mark.length);
  return (entries) => head + entries + tail;
}

function pageObjectAround<E>(urls: PageUrls, key: 'items' | 'data', entries: E, count: number, total: number, { page, perPage }: PageRequest, nextAfter?: string) {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const from = count ? (page - 1) * perPage + 1 : null;
  const next = page < lastPage ? urls.at(page + 1, nextAfter) : null;
  const links = [
    { url: page > 1 ? urls.at(page - 1) : null, label: '&laquo; Previous', active: false },
    ...pageWindow(page, lastPage).map((p) =>
      p === null ? { url: null, label: '...', active: false } : { url: urls.at(p), label: String(p), active: p === page },
    ),
    { url: next, label: 'Next &raquo;', active: false },
  ];
  return {
    current_page: page,
    [key]: entries,
    first_page_url: urls.at(1),
    from,
    last_page: lastPage,
    last_page_url: urls.at(lastPage),
    links,
    next_page_url: next,
    path: urls.path,
    per_page: perPage,
    prev_page_url: page > 1 ? urls.at(page - 1) : null,
    to: from === null ? null : from + count - 1,
    total,
  };
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

const PageLink = z.object({ url: z.string().nullable(), label: z.string(), active: z.boolean() });

/** The page object of the spec (§2 Pagination objects), entries under `key`. */
export const pageSchema = <K extends 'items' | 'data', T extends z.ZodType>(key: K, entry: T) =>
  z.object({
    current_page: z.number().int(),
    ...({ [key]: z.array(entry) } as { [P in K]: z.ZodArray<T> }),
    first_page_url: z.string(),
    from: z.number().int().nullable(),
    last_page: z.number().int(),
    last_page_url: z.string(),
    links: z.array(PageLink).openapi({ description: 'Previous, the first pages, a window around this one, the last pages, next (Laravel)' }),
    next_page_url: z.string().nullable(),
    path: z.string(),
    per_page: z.number().int(),
    prev_page_url: z.string().nullable(),
    to: z.number().int().nullable(),
    total: z.number().int(),
  });

/** The review list's `pagination` (spec §2). */
export const ReviewPagination = z.object({
  total: z.number().int(),
  per_page: z.number().int(),
  current_page: z.number().int(),
  last_page: z.number().int(),
  next_page_url: z.string().nullable(),
  prev_page_url: z.string().nullable(),
});
