import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';

export function catalogRoutes() {
  return new OpenAPIHono<AppEnv>();
}
