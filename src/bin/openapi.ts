import { writeFile } from 'node:fs/promises';
import { createApp } from '../app.js';
import { loadConfig } from '../env.js';
import { createServices } from '../services.js';

/**
 * `npm run openapi [-- <file>]`: writes the OpenAPI document the service serves at /openapi.json (to stdout,
 * or to the file), for linting and for clients' code generators. Nothing is read from the database.
 */
// The servers entry names PUBLIC_BASE_URL when set, else where the request was made; a METRICS_TOKEN puts /metrics in
// the document (it is served only while one is set).
const config = loadConfig({ PUBLIC_BASE_URL: 'https://store.topup.invalid', ...process.env, LOG_LEVEL: 'silent', CODE_ENCRYPTION_KEY: '0'.repeat(64), METRICS_TOKEN: 'documents-the-metrics-route' });
const services = createServices(config);
try {
  const response = await createApp(services).request('/openapi.json');
  const text = `${JSON.stringify(await response.json(), null, 2)}\n`;
  const file = process.argv[2];
  if (file) await writeFile(file, text);
  else process.stdout.write(text);
} finally {
  await services.close();
}
