import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv, Services } from '../../http/context.js';

/** C13 operator API and the queue dashboard, mounted at /admin. */
export function adminRoutes(_services: Services) {
  return new OpenAPIHono<AppEnv>();
}
