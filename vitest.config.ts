import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite and the topology suite have their own commands (npm run test:faults, npm run test:topology).
    exclude: ['test/faults/**', 'test/topology/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each gets its own database and BullMQ prefix.
    fileParallelism: true,
  },
});
