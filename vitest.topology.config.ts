import { defineConfig } from 'vitest/config';
import { CLIENT_SOURCE } from './test/suites.js';

/**
 * `npm run test:topology`: the store past one box (DESIGN C21), built from real components on this machine:
 * PgBouncer, HAProxy, a Redis Cluster or Sentinel set, a PostgreSQL primary with a synchronous standby, and the
 * service's API and worker processes; faults under load, DESIGN §2 checked after each.
 */
export default defineConfig({
  resolve: CLIENT_SOURCE,
  test: {
    include: ['test/topology/**/*.test.ts'],
    // Without haproxy, pgbouncer, redis-server or initdb the run stops at once, saying which is missing.
    globalSetup: ['test/topology/setup.ts'],
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 180_000,
    // Many real processes on a 2-core machine: one file at a time.
    fileParallelism: false,
  },
});
