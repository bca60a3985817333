import { createRoute, type OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Handler, MiddlewareHandler } from 'hono';
import { requireToken } from '../modules/auth/middleware.js';
import type { AppEnv } from './context.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type RouteDoc = {
  method: Method;
  path: string;
  summary: string;
  tags: string[];
  /** The request's query schema: the same object validates (in the handler) and documents. */
  query?: z.ZodObject;
  /** The request's body schema, documented for JSON and form bodies. */
  body?: z.ZodType;
  /** `token` routes get the bearer-token guard here; other schemes bring their own middleware. */
  security?: 'token' | 'apiKey' | 'admin';
};

const SECURITY_SCHEME = { token: 'bearerToken', apiKey: 'apiKey', admin: 'adminToken' } as const;

/**
 * Registers a route on `router` and documents it in the router's OpenAPI registry.
 * Validation stays in the handler (`validate(schema, …)`) so every failure renders the C4 messages.
 */
export function route(
  router: OpenAPIHono<AppEnv>,
  doc: RouteDoc,
  ...handlers: [...MiddlewareHandler<AppEnv>[], Handler<AppEnv>]
): void {
  const openApiPath = doc.path.replace(/:([A-Za-z_]+)/g, '{$1}');
  const body = doc.body
    ? {
        content: {
          'application/json': { schema: doc.body },
          'application/x-www-form-urlencoded': { schema: doc.body },
          'multipart/form-data': { schema: doc.body },
        },
      }
    : undefined;
  router.openAPIRegistry.registerPath(
    createRoute({
      method: doc.method,
      path: openApiPath,
      summary: doc.summary,
      tags: doc.tags,
      ...(doc.security ? { security: [{ [SECURITY_SCHEME[doc.security]]: [] }] } : {}),
      request: { ...(doc.query ? { query: doc.query } : {}), ...(body ? { body } : {}) },
      responses: {
        200: { description: 'Success envelope' },
        401: { description: 'Missing or invalid credentials' },
        422: { description: 'Validation failure' },
      },
    }),
  );
  const guards = doc.security === 'token' ? [requireToken] : [];
  router.on(doc.method.toUpperCase(), [doc.path], ...guards, ...(handlers as Handler<AppEnv>[]));
}
