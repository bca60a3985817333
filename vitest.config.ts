import { defineConfig } from 'vitest/config';
import { TOOL_SUITE } from './test/suites.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault, topology and tools suites have their own commands (npm run test:faults, test:topology, test:tools).
    exclude: ['test/faults/**', 'test/topology/**', ...TOOL_SUITE, 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each gets its own database and BullMQ prefix.
    fileParallelism: true,
  },
});
