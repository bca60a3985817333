/** One page of a list (C11): which page, and how many entries per page. */
export type PageRequest = { page: number; perPage: number };

export const pageOffset = ({ page, perPage }: PageRequest) => (page - 1) * perPage;

/** Reads `page` and `per_page` (C11): defaults to page 1 and `defaultPerPage`, per_page capped at 100. */
export function pageRequest(query: { page?: number; per_page?: number }, defaultPerPage: number): PageRequest {
  return { page: query.page ?? 1, perPage: Math.min(query.per_page ?? defaultPerPage, 100) };
}
