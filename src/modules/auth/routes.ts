import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/context.js';
import type { Services } from '../../services.js';
import { route } from '../../http/route.js';
import { createAuthLimiters, generateTokenHandler } from './handlers.js';

export function authRoutes(services: Services) {
  const router = new OpenAPIHono<AppEnv>();
  route(
    router,
    {
      method: 'post',
      path: '/generate/authorization-token',
      summary: 'Exchange the PublicKey and SecretKey headers for a bearer token',
      tags: ['Authentication'],
    },
    generateTokenHandler(createAuthLimiters(services)),
  );
  return router;
}
