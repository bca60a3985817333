import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';

/** A6, A12, A15, A16 (+ C1 aliases). */
export function orderRoutes() {
  return new OpenAPIHono<AppEnv>();
}
