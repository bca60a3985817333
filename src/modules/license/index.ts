import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv, Services } from '../../http/context.js';

/** Interface B, mounted at /license-api. */
export function licenseRoutes(_services: Services) {
  return new OpenAPIHono<AppEnv>();
}
