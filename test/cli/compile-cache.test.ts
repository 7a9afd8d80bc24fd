// Node's compile cache as the image keeps it (Dockerfile: test/tools/warm-compile-cache.mjs at
// build time, as the Job's user, under NODE_COMPILE_CACHE; read-only at run time). Checked: a
// cache filled that way is what a later process loads the Kubernetes client's bundle from, also
// when the directory is read-only to it; and a cache that cannot be used (read-only, or a path
// that cannot be a directory) never changes a run's result.
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { chartDir, repoRoot, runCli, tempDir } from '../helpers.js';

const warmScript = join(repoRoot, 'test', 'tools', 'warm-compile-cache.mjs');
const bundle = join(repoRoot, 'dist', 'bundle', 'kubernetes-client.js');
// The Job runs as 65532; as root these tests do too, so a read-only directory is read-only to them.
const asJobUser: { uid?: number; gid?: number } = process.getuid?.() === 0 ? { uid: 65532, gid: 65532 } : {};
const accepted = (stderr: string, file: string) =>
  new RegExp(`V8 code cache for ESM file://${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was accepted`).test(stderr);

/** A temporary directory the Job's user can enter (mkdtemp makes it 0700). */
function openTempDir(): string {
  const dir = tempDir('compile-cache');
  chmodSync(dir, 0o755);
  return dir;
}

async function warmedCache(): Promise<string> {
  const dir = join(openTempDir(), 'cache');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const r = await execa(process.execPath, [warmScript, repoRoot], { ...asJobUser, env: { NODE_COMPILE_CACHE: dir } });
  expect(String(r.stdout)).toMatch(/^compile cache: \d+ modules under /);
  return dir;
}

function readOnly(dir: string): void {
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isDirectory()) chmodSync(join(e.parentPath, e.name), 0o555);
  chmodSync(dir, 0o555);
}

describe('compile cache', () => {
  it("a cache warmed at build time is what a later load of the Kubernetes client's bundle uses, read-only as in the Job", async () => {
    const dir = await warmedCache();
    readOnly(dir);
    const load = `await import(${JSON.stringify(bundle)}); console.log('loaded')`;
    const r = await execa(process.execPath, ['--input-type=module', '-e', load], {
      ...asJobUser,
      env: { NODE_COMPILE_CACHE: dir, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    });
    expect(String(r.stdout)).toBe('loaded');
    expect(accepted(String(r.stderr), bundle), String(r.stderr).slice(0, 2000)).toBe(true);
  });

  it('a cache that cannot be used or written changes nothing in a run', async () => {
    const dir = await warmedCache();
    readOnly(dir);
    const notADirectory = join(openTempDir(), 'file');
    writeFileSync(notADirectory, '');
    const values = join(openTempDir(), 'values.yaml');
    writeFileSync(values, 'web:\n  replicas: 3\n');
    chmodSync(values, 0o644);
    // A HOME of its own, as the image's /tmp: helm writes its config and cache there.
    const home = join(openTempDir(), 'home');
    mkdirSync(home);
    chmodSync(home, 0o777);
    const run = (cache: string | undefined, args: string[]) =>
      runCli(args, {
        user: asJobUser,
        env: {
          NODE_COMPILE_CACHE: cache,
          HOME: home,
          HELM_INSTALLER_TERMINATION_LOG: '/dev/null',
          HELM_INSTALLER_CHART: chartDir,
        },
      });
    for (const args of [['--version'], ['values', '--values', values]]) {
      const plain = await run(undefined, args);
      expect(plain.exitCode, String(plain.stderr)).toBe(0);
      for (const cache of [dir, join(notADirectory, 'cache')]) {
        const r = await run(cache, args);
        expect({ exitCode: r.exitCode, stdout: r.stdout }, `${cache}: ${r.stderr}`).toEqual({
          exitCode: 0,
          stdout: plain.stdout,
        });
      }
    }
  });
});
