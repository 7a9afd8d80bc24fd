// The Dockerfile's promises that no build is needed to check: helm pinned by the sha256 of the
// very binary the tests run, a numeric non-root user, a read-only-root-friendly environment, the
// CLI's bundle as entrypoint with `install` by default, a base a vendor can swap, and a final
// image of a few files: no npm, no node_modules, no package manager.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm4, installerNodeArgs, repoRoot } from '../helpers.js';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => !/^\s*#/.test(l));
const stages = dockerfile
  .join('\n')
  .split(/^FROM /m)
  .slice(1);
const final = stages[stages.length - 1]!;

describe('Dockerfile', () => {
  it('verifies helm against the sha256 of the pinned helm 4 the tests run', () => {
    const pinned = createHash('sha256').update(readFileSync(helm4)).digest('hex');
    const arg = /ARG HELM_SHA256=([0-9a-f]{64})/.exec(dockerfile.join('\n'));
    expect(arg?.[1]).toBe(pinned);
    expect(dockerfile.join('\n')).toMatch(
      /echo "\$\{HELM_SHA256\}  node_modules\/\.helm-installer\/helm4" \| sha256sum -c -/,
    );
  });

  it('is multi-stage, the base a build argument; the final stage is scratch with the rootfs made from the base, the bundle and no node_modules', () => {
    expect(dockerfile[dockerfile.findIndex((l) => l.startsWith('ARG BASE_IMAGE='))]).toBe(
      'ARG BASE_IMAGE=docker.io/library/node:24-bookworm-slim',
    );
    expect(stages.map((s) => s.split('\n')[0])).toEqual([
      '${BASE_IMAGE} AS build',
      '${BASE_IMAGE} AS rootfs',
      'scratch',
    ]);
    expect(stages[0]).toMatch(/^RUN node test\/tools\/bundle-cli\.mjs$/m);
    expect(stages[1]).toMatch(/^RUN sh \/tmp\/runtime-rootfs\.sh \/rootfs$/m);
    expect(final).toMatch(/^COPY --from=rootfs \/rootfs \/$/m);
    expect(final).toMatch(/^COPY --from=build \/src\/dist\/bundle dist\/bundle$/m);
    expect(final).not.toMatch(/node_modules|npm (ci|install)/);
  });

  it('runs as a numeric non-root user, writes only under /tmp, starts the CLI with install', () => {
    expect(final).toMatch(/^USER 65532:65532$/m);
    const env = /^ENV (.*)$/m.exec(final)![1]!;
    for (const v of ['HOME', 'HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME'])
      expect(env).toMatch(new RegExp(`${v}=/tmp(/|\\s)`));
    // The same Node flags as the bin's shebang and the tests' and bench's spawns (installerNodeArgs).
    const entrypoint = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(final)![1]!) as string[];
    expect(entrypoint).toEqual(['node', ...installerNodeArgs, '/opt/helm-installer/dist/bundle/cli.js']);
    expect(readFileSync(join(repoRoot, 'src', 'cli.ts'), 'utf8').split('\n')[0]).toBe(
      `#!/usr/bin/env -S node ${installerNodeArgs.join(' ')}`,
    );
    expect(final).toMatch(/^CMD \["install"\]$/m);
  });

  it('puts the version stamp of the verified helm beside it, so no run asks helm its version', () => {
    expect(stages[0]).toMatch(
      /install -m 0755 node_modules\/\.helm-installer\/helm4 \/tmp\/helm\s+&& cp node_modules\/\.helm-installer\/helm4\.version \/tmp\/helm\.version/,
    );
    expect(final).toMatch(/^COPY --from=build \/tmp\/helm \/usr\/local\/bin\/helm$/m);
    expect(final).toMatch(/^COPY --from=build \/tmp\/helm\.version \/usr\/local\/bin\/helm\.version$/m);
    expect(/^ENV .*HELM_BIN=\/usr\/local\/bin\/helm\s/m.test(final)).toBe(true);
  });

  it("keeps node's compile cache in the image (a Job's /tmp starts empty), filled as the Job's user", () => {
    const env = /^ENV (.*)$/m.exec(final)![1]!;
    expect(env).toMatch(/(^|\s)NODE_COMPILE_CACHE=\/opt\/helm-installer\/compile-cache(\s|$)/);
    const lines = final.split('\n');
    const user = lines.indexOf('USER 65532:65532');
    const warm = lines.findIndex((l) => /^RUN .*node \/tmp\/warm-compile-cache\.mjs \/opt\/helm-installer$/.test(l));
    // node names the cache directory after the uid: made by root for 65532 (in the rootfs), filled as 65532.
    const rootfs = readFileSync(join(repoRoot, 'test', 'tools', 'runtime-rootfs.sh'), 'utf8');
    expect(rootfs).toMatch(/^chown 65532:65532 "\$root\/opt\/helm-installer\/compile-cache"$/m);
    expect(lines.indexOf('COPY --from=rootfs /rootfs /')).toBeLessThan(user);
    expect(warm).toBeGreaterThan(user);
    expect(lines[warm]).toContain(
      '--mount=type=bind,from=build,source=/src/test/tools/warm-compile-cache.mjs,target=/tmp/warm-compile-cache.mjs',
    );
  });

  it('carries the OCI labels', () => {
    for (const label of ['title', 'description', 'version', 'revision', 'licenses', 'base.name']) {
      expect(final).toContain(`org.opencontainers.image.${label}=`);
    }
  });
});
