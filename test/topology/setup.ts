import { requireTools } from '../helpers/tools.js';

export default requireTools('npm run test:topology', ['haproxy', 'pgbouncer', 'redis-server', 'initdb']);
