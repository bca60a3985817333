import { requireTools } from './helpers/tools.js';

export default requireTools('npm run test:tools', ['chromium', 'haproxy', 'pgbouncer', 'promtool']);
