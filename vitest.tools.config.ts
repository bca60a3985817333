import { defineConfig } from 'vitest/config';
import { CLIENT_SOURCE, TOOL_SUITE } from './test/suites.js';

/**
 * `npm run test:tools`: the tests that run Debian's chromium, haproxy, pgbouncer and promtool (apt-get install
 * chromium haproxy pgbouncer prometheus); without one of them the run stops at once, saying which.
 */
export default defineConfig({
  resolve: CLIENT_SOURCE,
  test: {
    include: TOOL_SUITE,
    globalSetup: ['test/tools.setup.ts', 'test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: true,
  },
});
