import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite has its own command (npm run test:faults, vitest.faults.config.ts).
    exclude: ['test/faults/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel: each gets its own database and BullMQ prefix.
    fileParallelism: true,
  },
});
