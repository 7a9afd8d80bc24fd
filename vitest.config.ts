import { defineConfig } from 'vitest/config';

// Two projects. `unit` needs no cluster, no Go and no Debian package: pure logic, the real pinned
// helm, the built CLI without a cluster (`npm run test:unit`, seconds). `integration` needs the
// local control plane, a real registry, the real node: its global setup installs or builds what
// is missing (Debian packages, Go-built binaries) and starts or reuses the cluster.
const cluster = ['test/integration/**/*.test.ts', 'test/cluster/**/*.test.ts'];

export default defineConfig({
  test: {
    // Real helm and a real control plane: generous per-test time, never asserted as a figure.
    testTimeout: 180_000,
    hookTimeout: 900_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: cluster } },
      { extends: true, test: { name: 'integration', include: cluster, globalSetup: ['test/cluster/global-setup.ts'] } },
    ],
  },
});
