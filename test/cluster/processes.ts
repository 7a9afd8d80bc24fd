// Detached component processes and the pids.json that remembers them. A process is only
// ever signalled after checking that its pid still runs the binary we started, so a pid
// recycled by the kernel since is left alone.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RealNodeRecord } from './real-node.js';

export interface ComponentProcess {
  name: string;
  pid: number;
  bin: string;
  log: string;
}

export interface PidsFile {
  apiServerUrl: string;
  ports: Record<string, number>;
  versions: Record<string, string>;
  startedAt: string;
  components: ComponentProcess[];
  /** The real node (registry, containerd, kubelet), kept apart so the control plane's health ignores it. */
  node?: RealNodeRecord;
}

/** Starts `bin` in its own session with stdout/stderr appended to logs/<name>.log; survives our exit. */
export async function startDetached(
  name: string,
  bin: string,
  args: string[],
  logDir: string,
): Promise<ComponentProcess> {
  await mkdir(logDir, { recursive: true });
  const log = join(logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`cannot start ${name} (${bin}): ${error.message}`)));
      child.once('spawn', () => resolve(child.pid!));
    });
    child.unref();
    return { name, pid, bin, log };
  } finally {
    closeSync(fd);
  }
}

/** True when `pid` is alive and still runs `bin` (zombies count as dead). */
export function isRunning(proc: Pick<ComponentProcess, 'pid' | 'bin'>): boolean {
  try {
    const stat = readFileSync(`/proc/${proc.pid}/stat`, 'utf8');
    if (/^\d+ \(.*\) Z/.test(stat)) return false;
    const argv0 = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 === proc.bin;
  } catch {
    return false;
  }
}

/** SIGTERM to every live process, then SIGKILL to whatever is still there after `graceMs`. */
export async function stopProcesses(procs: ComponentProcess[], graceMs = 10_000): Promise<void> {
  const signal = (proc: ComponentProcess, sig: NodeJS.Signals) => {
    try {
      if (isRunning(proc)) process.kill(proc.pid, sig);
    } catch {
      // already gone
    }
  };
  for (const proc of [...procs].reverse()) signal(proc, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (procs.some(isRunning) && Date.now() < deadline) await sleep(100);
  for (const proc of procs) signal(proc, 'SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (procs.some(isRunning) && Date.now() < killDeadline) await sleep(50);
}

/** The last lines of a component's log, for error messages. */
export function logTail(proc: ComponentProcess, lines = 15): string {
  try {
    return readFileSync(proc.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function readPids(path: string): Promise<PidsFile | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PidsFile;
  } catch {
    return undefined;
  }
}

export async function writePids(path: string, pids: PidsFile): Promise<void> {
  await writeFile(path, `${JSON.stringify(pids, null, 2)}\n`);
}

/** Polls `probe` (errors count as "not yet"), giving up at once, with the log tail, if one of `procs` dies. */
export async function waitAlive(
  what: string,
  procs: ComponentProcess[],
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const dead = procs.find((p) => !isRunning(p));
    if (dead) throw new DeadProcessError(dead);
    try {
      if (await probe()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const tails = procs.map((p) => `--- ${p.log}\n${logTail(p, 5)}`).join('\n');
      const detail = last instanceof Error ? ` (last error: ${last.message})` : '';
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${detail}\n${tails}`);
    }
    await sleep(250);
  }
}

class DeadProcessError extends Error {
  constructor(proc: ComponentProcess) {
    super(`${proc.name} (pid ${proc.pid}) exited during start-up; last lines of ${proc.log}:\n${logTail(proc)}`);
  }
}
