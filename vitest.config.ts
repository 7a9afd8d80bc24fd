import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/cluster/global-setup.ts'],
    // Real helm and a real control plane: generous per-test time, never asserted as a figure.
    testTimeout: 180_000,
    hookTimeout: 900_000,
    pool: 'forks',
  },
});
