import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from '@hono/zod-openapi';
import type { App } from '../../src/app.js';

/**
 * The contract test: every answer the test suite gets from a route is checked against the response schema
 * the route declares for that status (its OpenAPI contract). Routes answered are noted in a file per test
 * file; the global teardown then checks that every declared route was answered at least once.
 */
type RouteDefinition = {
  method: string;
  path: string;
  responses: Record<string, { content?: Record<string, { schema?: z.ZodType }> }>;
};

export type Contract = {
  /** Wraps the app's fetch: answers pass through unchanged, checked on the way. */
  fetch: App['fetch'];
  /** Answers that broke their route's declared schema (empty when the contract holds). */
  violations: () => string[];
};

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

export function routeDefinitions(app: App): RouteDefinition[] {
  return app.openAPIRegistry.definitions
    .filter((d): d is Extract<typeof d, { type: 'route' }> => d.type === 'route')
    .map((d) => d.route as unknown as RouteDefinition);
}

export function checkContract(app: App, coverageDir: string, label: string): Contract {
  const routes = routeDefinitions(app).map((route) => ({
    route,
    pattern: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const problems: string[] = [];
  const file = join(coverageDir, `${process.pid}-${label.replace(/[^a-z0-9]+/gi, '_')}.txt`);
  appendFileSync(file, routes.map(({ route }) => `declared ${key(route.method, route.path)}\n`).join(''));

  const fetch: App['fetch'] = async (request, env, ctx) => {
    const response = await app.fetch(request, env, ctx);
    const { pathname } = new URL(request.url);
    const match = routes.find(({ route, pattern }) => route.method.toUpperCase() === request.method && pattern.test(pathname));
    if (!match) return response;
    const declared = match.route.responses[String(response.status)];
    const schema = declared?.content?.['application/json']?.schema;
    const where = `${key(request.method, pathname)} → ${response.status}`;
    if (!declared) {
      problems.push(`${where}: the route declares no ${response.status} answer`);
      return response;
    }
    appendFileSync(file, `answered ${key(match.route.method, match.route.path)}\n`);
    // A declared answer of another type (a statement's text/csv) is the route's to shape: its JSON schema is not it.
    const type = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    if (type !== 'application/json' && declared.content?.[type]) return response;
    if (!schema) return response;
    const body: unknown = await response
      .clone()
      .json()
      .catch(() => undefined);
    const result = schema.safeParse(body);
    if (!result.success) problems.push(`${where}: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return response;
  };
  return { fetch, violations: () => [...problems] };
}
