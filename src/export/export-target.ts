// Where the export goes and what Flux reads it from, settled before anything is rendered, so that
// bad input leaves nothing written: --out (a new folder, or one in a git work tree, written in
// place: write-work-tree.ts), and the source, an OCI artifact (the default) or a git repository
// (--source git: its URL, branch and the export's path in it, checked against the work tree
// --out lies in, when it does: locally, no network).
import { InvalidInputError, UsageError } from '../common/errors.js';
import { branchIn, findWorkTree, uncommittedChanges, type WorkTree } from './git-worktree.js';
import { checkOut } from './write-folder.js';
import { checkWorkTreeOut } from './write-work-tree.js';
import { existsSync } from 'node:fs';

export interface TargetOptions {
  out: string;
  force: boolean;
  registry?: string;
  ociRepository?: string;
  source: 'oci' | 'git';
  gitUrl?: string;
  gitBranch: string;
  gitPath?: string;
}

export interface ExportTarget {
  /** The git work tree --out lies in: the export is written in place there. */
  tree?: WorkTree;
  /** The export's path in the repository (--source git). */
  gitPath: string;
  /** What could not be checked (no git binary), for the log. */
  warnings: string[];
}

export function exportTarget(o: TargetOptions): ExportTarget {
  const { tree, warnings } = outTarget(o);
  if (o.source === 'oci') {
    checkOciOptions(o);
    return { tree, gitPath: '.', warnings };
  }
  if (!o.gitUrl)
    throw new UsageError(
      '--source git writes a GitRepository and has no repository to point it at: --git-url (HELM_INSTALLER_GIT_URL) is not set',
      { hint: 'Add --git-url https://HOST/PATH (or ssh://), the repository the export is committed to.' },
    );
  const gitPath = checkGitPath(o.gitPath, tree);
  if (tree) warnings.push(...checkBranch(tree, o.gitBranch));
  return { tree, gitPath, warnings };
}

/** --out, for either form: a git work tree's (written in place, its uncommitted changes refused) or a folder's. */
export function outTarget(o: Pick<TargetOptions, 'out' | 'force' | 'source'>): { tree?: WorkTree; warnings: string[] } {
  const tree = findWorkTree(o.out);
  if (tree) checkWorkTreeOut(o.out, o.force);
  else checkOut(o.out, o.force);
  return { tree, warnings: tree ? checkCommitted(o, tree) : [] };
}

function checkOciOptions(o: TargetOptions): void {
  const gitOnly =
    o.gitUrl !== undefined
      ? '--git-url (HELM_INSTALLER_GIT_URL)'
      : o.gitPath !== undefined
        ? '--git-path (HELM_INSTALLER_GIT_PATH)'
        : undefined;
  if (gitOnly)
    throw new UsageError(`${gitOnly} is read with --source git only, and --source is oci`, {
      hint: 'Add --source git (HELM_INSTALLER_EXPORT_SOURCE=git) for a GitRepository, or leave the git options out for an OCIRepository.',
    });
  if (o.ociRepository || o.registry) return;
  throw new UsageError(
    'export writes an OCIRepository and has no registry to point it at: --oci-repository (HELM_INSTALLER_OCI_REPOSITORY) is not set, nor --registry',
    {
      hint: 'Give --oci-repository host[:port]/path, or --registry (HELM_INSTALLER_REGISTRY) to default it to <registry>/<app>-export; or --source git with --git-url for a git repository.',
    },
  );
}

/** In a work tree, --out's place there is where Flux reads the export: --git-path must say the same. */
function checkGitPath(gitPath: string | undefined, tree: WorkTree | undefined): string {
  if (!tree) return gitPath ?? '.';
  if (gitPath === undefined || gitPath === tree.path) return tree.path;
  throw new UsageError(
    `--git-path (HELM_INSTALLER_GIT_PATH) is ${gitPath}, but --out is at ${tree.path} in the git work tree ${tree.root}: Flux would read the export from a folder it is not in`,
    {
      hint: `Leave --git-path out (it defaults to --out's path in its work tree), or set it to ${tree.path}.`,
    },
  );
}

function checkBranch(tree: WorkTree, branch: string): string[] {
  const found = branchIn(tree, branch);
  if (found === 'no-git')
    return [
      'git is not installed here: whether --git-branch exists in the work tree, and whether --out holds uncommitted changes, was not checked',
    ];
  if (found === 'found') return [];
  throw new InvalidInputError(
    `--git-branch (HELM_INSTALLER_GIT_BRANCH) ${branch} is not a branch of the git work tree ${tree.root} (neither local nor remote-tracking): Flux would have nothing to follow`,
    {
      hint: `Check the name (git branch -a lists them), or fetch it first (git fetch); the default is main.`,
    },
  );
}

/** Tracked files of --out changed and not committed would be overwritten: refused unless --force. */
function checkCommitted(o: Pick<TargetOptions, 'out' | 'force' | 'source'>, tree: WorkTree): string[] {
  if (!existsSync(o.out)) return [];
  const changes = uncommittedChanges(o.out);
  if (changes === undefined)
    return o.source === 'oci'
      ? ['git is not installed here: whether --out holds uncommitted changes was not checked']
      : [];
  if (changes.length === 0 || o.force) return [];
  throw new UsageError(
    `--out ${o.out} (in the git work tree ${tree.root}) has uncommitted changes the export would overwrite: ${changes.slice(0, 10).join(', ')}${changes.length > 10 ? ', ...' : ''}`,
    {
      hint: "Commit or stash them first (git stash), so the export's diff is its own; or add --force (HELM_INSTALLER_FORCE=true) to overwrite them.",
    },
  );
}
