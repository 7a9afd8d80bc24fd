// One cluster operation at a time per cache root: `cluster:up` in one shell and a test run in
// another must not both start a cluster. A directory is the lock (mkdir is atomic); it holds
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
  await mkdir(cacheRoot(), { recursive: true });
  const lockDir = join(cacheRoot(), 'cluster.lock');
  const deadline = Date.now() + WAIT_MS;
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
      if (Date.now() > deadline) throw new Error(`${lockDir} is held by another process; remove it if that process is gone`);
      if (!announced) log(`waiting for another cluster operation to finish (${lockDir})`);
      announced = true;
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
