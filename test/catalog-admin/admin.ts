import type { TestApp } from '../helpers/harness.js';

/** The operator's side of the store API: JSON bodies with the admin token. */
export function adminApi(app: TestApp, token = app.adminToken) {
  const send = (method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    post: (path: string, body?: unknown) => send('POST', path, body),
    patch: (path: string, body: unknown) => send('PATCH', path, body),
  };
}
