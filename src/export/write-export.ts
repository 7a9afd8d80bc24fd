// The one way either form of the export reaches --out (issue 36: an export never destroys).
// Everything is written to a temporary folder beside --out first (write-folder.ts); then, with the
// new files known, `placeExport` (export-manifest.ts, pure) decides against what --out holds and
// what an earlier export wrote there (its `.helm-installer-export`): a folder that holds nothing
// else is replaced whole, at once; a git work tree, or a folder with files no export wrote, is
// written in place, the earlier export's files replaced or removed and nothing else touched. A
// file of the user's where the export would write is a conflict: named, exit 2, nothing written.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../common/errors.js';
import {
  earlierExportFiles,
  listFiles,
  MANIFEST,
  manifestText,
  placeExport,
  type Placement,
} from './export-manifest.js';
import { abandonFolder, finishFolder, startFolder } from './write-folder.js';
import { isSopsEncrypted } from './write-work-tree.js';

export interface WriteOptions {
  /** --out lies in a git work tree: always in place. */
  inTree: boolean;
  /** The files that hold secret values in clear: one the user encrypted with SOPS is kept as it is. */
  isSecret: (path: string) => boolean;
}

/** Fills a temporary folder, then places it at --out; returns the encrypted files kept. */
export async function writeExportTo(
  out: string,
  o: WriteOptions,
  fill: (temp: string) => Promise<void> | void,
): Promise<{ kept: string[] }> {
  const full = resolve(out);
  const temp = startFolder(full);
  try {
    await fill(temp);
    const files = listFiles(temp).filter((f) => f !== MANIFEST);
    const earlier = earlierExportFiles(full);
    const ours = new Set(earlier ?? []);
    const encrypted = files.filter(
      (f) =>
        o.isSecret(f) &&
        ours.has(f) &&
        existsSync(join(full, f)) &&
        isSopsEncrypted(readFileSync(join(full, f), 'utf8')),
    );
    const placement = placeExport({ files, present: listFiles(full), earlier, inTree: o.inTree, encrypted });
    if (placement.conflicts.length > 0) throw conflictError(full, placement.conflicts);
    writeFileSync(join(temp, MANIFEST), manifestText(files));
    if (placement.mode === 'folder') finishFolder(temp, full);
    else moveInPlace(temp, full, placement);
    return { kept: encrypted };
  } finally {
    abandonFolder(temp);
  }
}

/** The earlier export's leftovers go (and the folders they leave empty), then each new file is moved in. */
function moveInPlace(temp: string, full: string, p: Placement): void {
  mkdirSync(full, { recursive: true });
  for (const path of p.remove) {
    rmSync(join(full, path), { force: true });
    pruneEmpty(full, dirname(path));
  }
  for (const path of [...p.write, MANIFEST]) {
    const to = join(full, path);
    mkdirSync(dirname(to), { recursive: true });
    try {
      renameSync(join(temp, path), to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      copyFileSync(join(temp, path), to);
    }
  }
}

/** Removes `dir` (relative) and its parents below --out while they are empty. */
function pruneEmpty(full: string, dir: string): void {
  for (let d = dir; d !== '.' && d !== ''; d = dirname(d)) {
    const abs = join(full, d);
    if (!existsSync(abs) || readdirSync(abs).length > 0) return;
    rmdirSync(abs);
  }
}

function conflictError(full: string, conflicts: string[]): UsageError {
  const shown = conflicts.slice(0, 10).join(', ') + (conflicts.length > 10 ? `, ... (${conflicts.length} in all)` : '');
  return new UsageError(
    `--out ${full} holds files no earlier export wrote where this export writes: ${shown}; they are kept, and nothing was written`,
    {
      hint: `Move or rename them, or give --out (HELM_INSTALLER_OUT) a folder of its own (e.g. a subfolder of the repository); an export replaces only the files listed in its ${MANIFEST}.`,
    },
  );
}

/** The log line for a file kept because the user encrypted it. */
export function keptEncrypted(path: string): string {
  return `${path} is encrypted (SOPS) and was kept as it is: the export's version of it was not written; if what it holds changed, decrypt, update and encrypt it again`;
}
