// What `export` can check about a git work tree on this machine, with no network: whether --out
// lies in one (a `.git` above it), where (its path in the repository, which --git-path must
// match: Flux reads the export at that path), whether the branch Flux is to follow exists there,
// and whether the export's folder holds uncommitted changes it would overwrite. The git binary is
// needed for the last two only; without one they are skipped, and the caller says so.
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { InvalidInputError } from '../common/errors.js';

export interface WorkTree {
  /** The work tree's top folder (real path). */
  root: string;
  /** --out's path in the repository, `.` for the root, `/`-separated. */
  path: string;
}

/** The work tree --out lies in (--out need not exist yet), or undefined. */
export function findWorkTree(out: string): WorkTree | undefined {
  const full = realOrNearest(resolve(out));
  for (let dir = full; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return { root: dir, path: relative(dir, full).split('\\').join('/') || '.' };
    if (dirname(dir) === dir) return undefined;
  }
}

/** The real path of `full`, or of its nearest existing folder with the rest appended. */
function realOrNearest(full: string): string {
  if (existsSync(full)) return realpathSync(full);
  return join(realOrNearest(dirname(full)), basename(full));
}

/** Runs git in `dir`; undefined when git is not installed; `allowFailure`: null when git exits non-zero. */
function git(dir: string, args: string[], allowFailure = false): string | undefined | null {
  try {
    return execFileSync('git', ['-C', dir, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (allowFailure) return null;
    const stderr = String((error as { stderr?: unknown }).stderr ?? (error as Error).message).trim();
    throw new InvalidInputError(`git cannot read the work tree at ${dir} (git ${args[0]}): ${stderr}`, {
      hint: 'Export into a folder of a work tree git can read (git status works there), or into a folder outside any git work tree.',
    });
  }
}

export type BranchCheck = 'found' | 'missing' | 'no-git';

/** A local branch, a remote-tracking one (any remote), or the branch HEAD names (even unborn). */
export function branchIn(tree: WorkTree, branch: string): BranchCheck {
  const refs = git(tree.root, [
    'for-each-ref',
    '--format=%(refname)',
    `refs/heads/${branch}`,
    `refs/remotes/*/${branch}`,
  ]);
  if (refs === undefined) return 'no-git';
  if (refs!.trim() !== '') return 'found';
  // Exits 1 on a detached HEAD: no branch named there.
  const head = git(tree.root, ['symbolic-ref', '--quiet', 'HEAD'], true);
  return head?.trim() === `refs/heads/${branch}` ? 'found' : 'missing';
}

/** Tracked files under `dir` with changes not committed (staged or not); undefined without git. */
export function uncommittedChanges(dir: string): string[] | undefined {
  const status = git(dir, ['status', '--porcelain', '--untracked-files=no', '--', '.']);
  return status === undefined
    ? undefined
    : status!
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3));
}
