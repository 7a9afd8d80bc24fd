import { defineConfig } from 'vitest/config';

// Three projects, fastest first:
// - `unit`: pure logic and the real pinned helm, no cluster, no Go, no Debian package, no spawned
//   CLI (`npm run test:unit`: the fast loop, seconds).
// - `cli`: the built CLI spawned as a Job runs it (argv + env), against the real helm but no
//   cluster: bad and hostile input, secrets kept, images on the fixture charts.
// - `integration`: the local control plane, a real registry, the real node; its global setup
//   installs or builds what is missing (Debian packages, Go-built binaries) and starts or reuses
//   the cluster.
// `npm test` runs all three.
const cluster = ['test/integration/**/*.test.ts', 'test/cluster/**/*.test.ts'];
const cli = ['test/cli/**/*.test.ts', 'test/images/airgap-fixtures.test.ts'];

export default defineConfig({
  test: {
    // Real helm and a real control plane: generous per-test time, never asserted as a figure.
    testTimeout: 180_000,
    hookTimeout: 900_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...cluster, ...cli] } },
      { extends: true, test: { name: 'cli', include: cli } },
      { extends: true, test: { name: 'integration', include: cluster, globalSetup: ['test/cluster/global-setup.ts'] } },
    ],
  },
});
