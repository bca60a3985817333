import { defineConfig } from 'vitest/config';
import { CLIENT_SOURCE, TOOL_SUITE } from './test/suites.js';

export default defineConfig({
  resolve: CLIENT_SOURCE,
  test: {
    include: ['test/**/*.test.ts'],
    // The fault, topology and tools suites have their own commands (npm run test:faults, test:topology, test:tools).
    exclude: ['test/faults/**', 'test/topology/**', ...TOOL_SUITE, 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Four files at a time, whatever the cores: the tests wait on PostgreSQL, Redis and processes of their own far
    // more than they compute, so two cores run four files in about half the time of one (docs/testing.md).
    maxWorkers: 4,
    // A worker keeps the service's modules loaded from one file to the next instead of loading them again for each
    // (about two seconds a file). Files share no state through them: each starts its own services on its own
    // database and queue prefix, and the modules hold no state of their own (test/lifecycle covers fresh processes).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each gets its own database and BullMQ prefix.
    fileParallelism: true,
  },
});
