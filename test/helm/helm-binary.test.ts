// The helm version without running helm: the stamp beside the pinned binary says what the binary
// itself says, and a stamp that does not match the binary (or none) falls back to asking helm.
// A spy wrapper around the REAL helm records whether helm was run.
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectHelm, readVersionStamp, versionStampPath } from '../../src/helm/helm-binary.js';
import { helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

const dir = tempDir('helm-binary');

function spyHelm(name: string, real: string): { path: string; calls: () => string[] } {
  const log = join(dir, `${name}.calls`);
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(path, 0o755);
  return { path, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []) };
}

// A checkout installed before the stamps existed gets them here (npm install writes them too).
beforeAll(async () => {
  await execa(process.execPath, [join(repoRoot, 'test', 'tools', 'stamp-helm.mjs')]);
});

describe('helm version stamp', () => {
  it('the stamps written beside the pinned helms say what each pinned helm says of itself', async () => {
    for (const [bin, major] of [
      [helm4, 4],
      [helm3, 3],
    ] as const) {
      const said = String((await execa(bin, ['version', '--short'])).stdout).trim();
      expect(JSON.parse(readFileSync(versionStampPath(bin), 'utf8'))).toEqual({
        version: said,
        size: statSync(bin).size,
      });
      expect(readVersionStamp(bin)?.major).toBe(major);
    }
  });

  it('with a stamp for this binary, helm is not run', async () => {
    const spy = spyHelm('stamped-helm', helm3);
    writeFileSync(
      versionStampPath(spy.path),
      JSON.stringify({ version: 'v3.17.2+gcc0bbbd', size: statSync(spy.path).size }),
    );
    expect(await detectHelm(spy.path)).toEqual({ path: spy.path, version: 'v3.17.2', major: 3, traits: helmTraits(3) });
    expect(spy.calls()).toEqual([]);
  });

  it('a stamp written for another binary (size differs) is ignored and helm is asked', async () => {
    const spy = spyHelm('restamped-helm', helm4);
    writeFileSync(
      versionStampPath(spy.path),
      JSON.stringify({ version: 'v3.17.2', size: statSync(spy.path).size + 1 }),
    );
    expect(await detectHelm(spy.path)).toEqual({ path: spy.path, version: 'v4.1.4', major: 4, traits: helmTraits(4) });
    expect(spy.calls()).toEqual(['version --short']);
  });

  it('without a stamp helm is asked; a stamp naming helm 2 or garbage counts as none', async () => {
    const spy = spyHelm('plain-helm', helm4);
    expect(await detectHelm(spy.path)).toEqual({ path: spy.path, version: 'v4.1.4', major: 4, traits: helmTraits(4) });
    writeFileSync(versionStampPath(spy.path), JSON.stringify({ version: 'v2.16.0', size: statSync(spy.path).size }));
    expect(readVersionStamp(spy.path)).toBeUndefined();
    writeFileSync(versionStampPath(spy.path), '{not json');
    expect(readVersionStamp(spy.path)).toBeUndefined();
    expect(readVersionStamp('helm')).toBeUndefined();
  });
});

describe('what each helm does differently (helm-traits.ts)', () => {
  it('helm 4 takes a post-renderer plugin by name and post-renders hooks; helm 3 runs an executable and does not', () => {
    expect(helmTraits(4)).toMatchObject({
      postRenderer: 'plugin',
      postRendersHooks: true,
      waitArgs: ['--wait=watcher'],
    });
    expect(helmTraits(3)).toMatchObject({ postRenderer: 'executable', postRendersHooks: false, waitArgs: ['--wait'] });
  });
});
