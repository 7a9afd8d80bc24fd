// Writing the export into a git work tree: in place, so that git sees exactly what changed. The
// rename of a complete folder (write-folder.ts) would take the work tree's .git and the user's
// other files with it; here only the earlier export's own paths are replaced (README.md, flux/,
// the release folders its flux/kustomizations.yaml names), everything else is left as it is, and
// a file the user encrypted with SOPS in a secrets/ folder is kept rather than written again in
// clear. Everything is rendered before the first file is touched; an interruption while writing
// leaves a work tree that `git checkout` and `git clean` restore.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { UsageError } from '../common/errors.js';
import { checkOut, writeFiles } from './write-folder.js';

const OWN_FILES = ['README.md', 'flux'];

/** The top-level paths an earlier export in `out` wrote; undefined when `out` holds none. */
function earlierExport(out: string): string[] | undefined {
  const file = join(out, 'flux', 'kustomizations.yaml');
  if (!existsSync(file)) return undefined;
  const names = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: unknown } } | null)
    .filter((k) => k?.kind === 'Kustomization' && typeof k.metadata?.name === 'string')
    .map((k) => k!.metadata!.name as string)
    // A release folder is one name; anything else in the file is not the export's to remove.
    .filter((n) => /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(n));
  return [...OWN_FILES, ...names];
}

/** As checkOut, but a work tree's .git does not count, and an earlier export may be replaced without --force. */
export function checkWorkTreeOut(out: string, force: boolean): void {
  const full = resolve(out);
  if (!existsSync(full) || !statSync(full).isDirectory()) return checkOut(out, force);
  const others = readdirSync(full).filter((n) => n !== '.git');
  if (others.length === 0 || earlierExport(full) !== undefined || force) return;
  throw new UsageError(`--out ${full} is in a git work tree, holds files, and no earlier export (no flux/kustomizations.yaml)`, {
    hint: 'Give --out (HELM_INSTALLER_OUT) a folder of its own in the repository (and --git-path its path there), or add --force (HELM_INSTALLER_FORCE=true) to write the export among the files there (README.md and flux/ are replaced; nothing else is removed).',
  });
}

/** A file SOPS encrypted: a top-level `sops:` key (the metadata SOPS adds to YAML it encrypts). */
function isSopsEncrypted(text: string): boolean {
  return /^sops:\s*$/m.test(text);
}

/** Replaces the earlier export's paths by `files`; returns the encrypted secrets' files it kept. */
export function writeIntoWorkTree(out: string, files: Map<string, string>): string[] {
  const full = resolve(out);
  mkdirSync(full, { recursive: true });
  const kept: string[] = [];
  const next = new Map(files);
  for (const path of files.keys()) {
    const old = join(full, path);
    if (!/\/secrets\/[^/]+$/.test(path) || !existsSync(old)) continue;
    const text = readFileSync(old, 'utf8');
    if (!isSopsEncrypted(text)) continue;
    next.set(path, text);
    kept.push(path);
  }
  for (const entry of earlierExport(full) ?? []) rmSync(join(full, entry), { recursive: true, force: true });
  writeFiles(full, next);
  return kept;
}
