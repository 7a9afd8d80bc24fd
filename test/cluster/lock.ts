// One cluster operation at a time per cache root: `cluster:up` in one shell and a test run in
// another must not both start a cluster. Named locks the same way for tests sharing fixed names. A directory is the lock (mkdir is atomic); it holds
// the owner's pid so a lock left by a killed process is taken over.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cacheRoot } from './paths.js';

const WAIT_MS = 40 * 60_000; // a cold binary build under someone else's lock can take this long

function ownerAlive(lockDir: string): boolean {
  try {
    const pid = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPERM') return true;
    // No pid file yet: the owner is between mkdir and writeFile, unless the dir is old.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      try {
        return Date.now() - statSync(lockDir).mtimeMs < 10_000;
      } catch {
        return false;
      }
    }
    return false;
  }
}

export async function withLock<T>(log: (line: string) => void, fn: () => Promise<T>): Promise<T> {
  const release = await acquireLock('cluster', log, WAIT_MS);
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * Takes the lock `<cache root>/<name>.lock`, waiting up to waitMs for its owner; returns its
 * release. Also for tests that use fixed names in the shared cluster (the shipped manifests'
 * namespace): two runs from two checkouts would delete each other's Job and Role.
 */
export async function acquireLock(name: string, log: (line: string) => void, waitMs: number): Promise<() => void> {
  await mkdir(cacheRoot(), { recursive: true });
  const lockDir = join(cacheRoot(), `${name}.lock`);
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!ownerAlive(lockDir)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`${lockDir} is held by another process; remove it if that process is gone`);
      if (!announced) log(`waiting for another process holding ${lockDir}`);
      announced = true;
      await sleep(500);
    }
  }
  return () => rmSync(lockDir, { recursive: true, force: true });
}
