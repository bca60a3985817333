import { bootstrap, startOrExit } from '../startup/index.js';

/** `npm run db:migrate`: creates the database when missing and applies the committed migrations, then exits. */
const services = await startOrExit(() => bootstrap({ prepareDatabase: true }));
await services.close();
process.stderr.write('database migrated\n');
