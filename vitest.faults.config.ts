import { defineConfig } from 'vitest/config';
import { CLIENT_SOURCE } from './test/suites.js';

/** `npm run test:faults`: real processes killed, Redis emptied, PostgreSQL backends terminated (DESIGN §2 checked after each). */
export default defineConfig({
  resolve: CLIENT_SOURCE,
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 60_000,
    // Real processes on a 2-core machine: one file at a time keeps the faults where the tests put them.
    fileParallelism: false,
  },
});
