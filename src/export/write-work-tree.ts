// An export into a git work tree is written in place (write-export.ts), so that git sees exactly
// what changed: the rename of a complete folder would take the work tree's .git and the user's
// other files with it. Only the earlier export's own files (its .helm-installer-export) are
// replaced; a file in a secrets folder the user encrypted with SOPS is kept rather than written
// again in clear. An interruption while writing leaves a work tree that `git checkout` and
// `git clean` restore.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../common/errors.js';
import { earlierExportFiles, MANIFEST } from './export-manifest.js';
import { checkOut } from './write-folder.js';

/** As checkOut, but a work tree's .git does not count, and an earlier export may be replaced without --force. */
export function checkWorkTreeOut(out: string, force: boolean): void {
  const full = resolve(out);
  if (!existsSync(full) || !statSync(full).isDirectory()) return checkOut(out, force);
  const others = readdirSync(full).filter((n) => n !== '.git');
  if (others.length === 0 || earlierExportFiles(full) !== undefined || force) return;
  throw new UsageError(`--out ${full} is in a git work tree, holds files, and no earlier export (no ${MANIFEST})`, {
    hint: 'Give --out (HELM_INSTALLER_OUT) a folder of its own in the repository, or add --force (HELM_INSTALLER_FORCE=true) to write the export among the files there (none of them is removed or overwritten: one where the export writes is named, and nothing is written).',
  });
}

/** A file SOPS encrypted: a top-level `sops:` key (the metadata SOPS adds to YAML it encrypts). */
export function isSopsEncrypted(text: string): boolean {
  return /^sops:\s*$/m.test(text);
}
