// Temporary directories scoped to a callback, removed whatever happens inside, and on any exit
// the process sees: a run's directory holds generated values and the post-renderer's spill
// files, and the paths that end the process at once (a second signal, an uncaught exception:
// process.exit in main.ts) skip every finally. Only a SIGKILL leaves one behind.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<string>();
let exitHooked = false;

export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(process.env.HELM_INSTALLER_TMPDIR ?? tmpdir(), `${prefix}-`));
  removeAtExit(dir);
  try {
    return await fn(dir);
  } finally {
    live.delete(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

function removeAtExit(dir: string): void {
  // One listener for the process, added with its first directory; 'exit' runs synchronous code only.
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const d of live) rmSync(d, { recursive: true, force: true });
    });
  }
  live.add(dir);
}
