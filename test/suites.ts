import { fileURLToPath } from 'node:url';

/**
 * Test files that run a Debian tool (a browser, a pooler, a load balancer, promtool) beyond the Quick start's
 * PostgreSQL and Redis: `npm run test:tools` runs them, `npm test` leaves them out so it passes on any machine.
 */
export const TOOL_SUITE = [
  'test/browser/**/*.test.ts',
  'test/hardening/pooler.test.ts',
  'test/lifecycle/compose-cluster.test.ts',
  'test/observability/promtool.test.ts',
  // The check of the tools themselves: it needs redis-server and PostgreSQL 15's initdb installed here.
  'test/lifecycle/prerequisites.test.ts',
];

/**
 * Every suite imports the TypeScript client by its package name from its source (the package's `source` export
 * condition), so no suite needs its dist/ built.
 */
export const CLIENT_SOURCE = {
  alias: { '@topup-store/client': fileURLToPath(new URL('../clients/typescript/src/index.ts', import.meta.url)) },
};
