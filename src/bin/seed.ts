import { bootstrap, startOrExit } from '../startup/index.js';
import { seedDemoData } from '../seed/index.js';

/** `npm run seed [-- --json]` (C14): demo data, idempotently; with --json the credentials are all stdout holds. */
const json = process.argv.includes('--json');
const services = await startOrExit(() => bootstrap({ prepareDatabase: true }));
try {
  const credentials = await seedDemoData(services.db, services.config);
  const base = (services.config.PUBLIC_BASE_URL ?? `http://localhost:${services.config.PORT}`).replace(/\/+$/, '');
  const output = { ...credentials, baseUrl: `${base}/api/`, licenseBaseUrl: `${base}/license-api/` };
  process.stdout.write(json ? `${JSON.stringify(output)}\n` : `Demo data ready.\n${JSON.stringify(output, null, 2)}\n`);
} finally {
  await services.close();
}
