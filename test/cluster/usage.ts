// Who is using the shared cluster. Several test runs (several people, or vitest in two
// shells) may share one cluster; the one that started it must not stop it under the others.
// A test run registers its pid under users/; the cluster is stopped when the last test run
// leaves, and only if a test run started it (`stop-when-unused`). `cluster:up` removes that
// mark: a cluster someone asked for stays up until `cluster:down`.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const usersDir = (stateDir: string) => join(stateDir, 'users');
const stopMark = (stateDir: string) => join(stateDir, 'stop-when-unused');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function addTestRun(stateDir: string, startedNow: boolean): Promise<void> {
  await mkdir(usersDir(stateDir), { recursive: true });
  await writeFile(join(usersDir(stateDir), String(process.pid)), '');
  if (startedNow) await writeFile(stopMark(stateDir), '');
}

/** Pids of the test runs, still alive, registered as using the cluster. */
export async function liveTestRuns(stateDir: string): Promise<number[]> {
  const names = await readdir(usersDir(stateDir)).catch(() => [] as string[]);
  return names.map(Number).filter((pid) => pid > 0 && alive(pid));
}

/** Removes this process from the users; true when the cluster should now be stopped. */
export async function removeTestRun(stateDir: string): Promise<boolean> {
  await rm(join(usersDir(stateDir), String(process.pid)), { force: true });
  return (await liveTestRuns(stateDir)).length === 0 && existsSync(stopMark(stateDir));
}

export async function keepRunning(stateDir: string): Promise<void> {
  await rm(stopMark(stateDir), { force: true });
}
