import type { Context } from 'hono';
import type { AppEnv } from './context.js';

/** C3 headers on every response: no MIME sniffing, no framing of our pages, nothing kept in caches. */
export const PROTECTIVE_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "frame-ancestors 'none'",
  // A route may say otherwise; by default no token, new key or order ever lands in a cache.
  'Cache-Control': 'no-store',
} as const;

/** Set before the route runs, so every response built from the context (success or failure) carries them. */
export const protectiveHeaders = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  for (const [name, value] of Object.entries(PROTECTIVE_HEADERS)) c.header(name, value);
  await next();
};

/** For pages served as ready-made responses (the queue dashboard's), which the context's headers do not reach. */
export const protectReadyMadeResponses = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  await next();
  for (const [name, value] of Object.entries(PROTECTIVE_HEADERS)) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
};
