import type { Hono } from 'hono';

/** A route pattern (`/admin/orders/:utr/refund`, `/assets/*`) as a regular expression over whole paths. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/**
 * The methods some route answers on a path (405's `Allow`), from the app's own routes: middleware (`ALL`) does not
 * count. Read once, at the first call, when every route is registered.
 */
export function allowedMethods(app: Hono<never>): (path: string) => string[] {
  let routes: Array<{ method: string; pattern: RegExp }> | null = null;
  return (path) => {
    routes ??= app.routes.filter((route) => route.method !== 'ALL').map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
    const methods = new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
