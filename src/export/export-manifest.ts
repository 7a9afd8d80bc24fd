// What an earlier export wrote, so that the next one replaces only that (issue 36: `--force` into
// a git work tree once deleted its .git and the user's README). Every export writes the list of
// its files to `.helm-installer-export` at the top of --out; a folder without one holds no export
// of ours, except the rendered form's from before the list existed, whose files are those of
// README.md, flux/ and the release folders its flux/kustomizations.yaml names (as that form has
// always been recognised). `placeExport` is the decision, pure: where each file goes, what goes,
// and which of the user's files stand in the way.
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const MANIFEST = '.helm-installer-export';

const HEADER = [
  '# Written by helm-installer export: the files it wrote in this folder, one a line. The next',
  '# export replaces or removes these only; every other file here is kept.',
];

export function manifestText(files: string[]): string {
  return `${[...HEADER, ...[...files].sort()].join('\n')}\n`;
}

export function parseManifest(text: string): string[] {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#') && !l.split('/').includes('..'));
}

/** Every file (and symlink) under `dir`, `/`-separated, relative; `.git` anywhere is skipped. */
export function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir) || !lstatSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === '.git') return [];
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    return e.isDirectory() ? listFiles(join(dir, e.name), path) : [path];
  });
}

/** The files an earlier export in `out` wrote; undefined when `out` holds none. */
export function earlierExportFiles(out: string): string[] | undefined {
  const manifest = join(out, MANIFEST);
  if (existsSync(manifest)) return parseManifest(readFileSync(manifest, 'utf8'));
  const tops = legacyRenderedExport(out);
  return tops?.flatMap((top) =>
    existsSync(join(out, top)) && lstatSync(join(out, top)).isDirectory()
      ? listFiles(join(out, top), top)
      : existsSync(join(out, top))
        ? [top]
        : [],
  );
}

/** A rendered export from before the manifest: README.md, flux/ and its releases' folders. */
function legacyRenderedExport(out: string): string[] | undefined {
  const file = join(out, 'flux', 'kustomizations.yaml');
  if (!existsSync(file)) return undefined;
  const names = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: unknown } } | null)
    .filter((k) => k?.kind === 'Kustomization' && typeof k.metadata?.name === 'string')
    .map((k) => k!.metadata!.name as string)
    // A release folder is one name; anything else in the file is not the export's to remove.
    .filter((n) => /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(n));
  return ['README.md', 'flux', ...names];
}

export interface Placement {
  /** `folder`: the new export takes --out's place whole (nothing else is there); `in-place`: file by file. */
  mode: 'folder' | 'in-place';
  /** The earlier export's files the new one does not have: removed. */
  remove: string[];
  /** The new export's files to write (encrypted ones the user keeps are left out). */
  write: string[];
  /** Files the new export would overwrite (or put a folder over) that no export wrote: nothing is written. */
  conflicts: string[];
}

/**
 * Pure. `present`: the files now in --out (no `.git`); `earlier`: what an earlier export wrote
 * there (undefined: none); `inTree`: --out is in a git work tree (always in place: the rename of
 * a whole folder would take the tree's files with it); `encrypted`: new paths whose present file
 * the user encrypted with SOPS (kept, not written again in clear).
 */
export function placeExport(p: {
  files: string[];
  present: string[];
  earlier: string[] | undefined;
  inTree: boolean;
  encrypted: string[];
}): Placement {
  const ours = new Set([...(p.earlier ?? []), MANIFEST]);
  const foreign = p.present.filter((f) => !ours.has(f));
  const foreignSet = new Set(foreign);
  const conflicts = p.files.filter(
    (f) =>
      foreignSet.has(f) || ancestors(f).some((a) => foreignSet.has(a)) || foreign.some((x) => x.startsWith(`${f}/`)),
  );
  const next = new Set(p.files);
  const presentSet = new Set(p.present);
  const remove = (p.earlier ?? []).filter((f) => !next.has(f) && presentSet.has(f));
  const kept = new Set(p.encrypted);
  return {
    mode: p.inTree || foreign.length > 0 ? 'in-place' : 'folder',
    remove,
    write: p.files.filter((f) => !kept.has(f)),
    conflicts,
  };
}

/** `a/b/c` -> `a`, `a/b`. */
function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
