import { readFile, writeFile } from 'node:fs/promises';
import { createApp } from '../app.js';
import { loadConfig } from '../core/env.js';
import { createServices } from '../runtime/services.js';
import { storeGauges } from '../startup/gauges.js';

/**
 * `npm run openapi`: writes the OpenAPI document the service serves at /openapi.json to docs/openapi.json, where
 * readers and clients' code generators find it (`-- <file>` writes elsewhere, `-- -` to stdout). `--check <file>`
 * fails, naming the command to run, when the file is not the current document: CI runs it. Nothing is read from the
 * database.
 */
// The servers entry names a placeholder URL, so the committed document does not depend on who generated it; a
// METRICS_TOKEN puts /metrics in the document (it is served only while one is set).
const config = loadConfig({
  ...process.env,
  PUBLIC_BASE_URL: 'https://store.topup.invalid',
  LOG_LEVEL: 'silent',
  CODE_ENCRYPTION_KEY: '0'.repeat(64),
  METRICS_TOKEN: 'documents-the-metrics-route',
});
const services = createServices(config, storeGauges);
let document: string;
try {
  const response = await createApp(services).request('/openapi.json');
  document = `${JSON.stringify(await response.json(), null, 2)}\n`;
} finally {
  await services.close();
}

const [first, second] = process.argv.slice(2);
if (first?.startsWith('-') && first !== '-' && first !== '--check') {
  process.stderr.write('usage: npm run openapi [-- <file> | - | --check <file>]\n');
  process.exit(2);
}
if (first === '--check') {
  const committed = await readFile(second ?? 'docs/openapi.json', 'utf8').catch(() => '');
  if (committed !== document) {
    process.stderr.write(`${second ?? 'docs/openapi.json'} is not the document the service serves: run \`npm run openapi\` and commit it\n`);
    process.exit(1);
  }
} else if (first === '-') process.stdout.write(document);
else await writeFile(first ?? 'docs/openapi.json', document);
