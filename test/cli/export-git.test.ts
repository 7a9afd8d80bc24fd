// `export --source git` through the built CLI, no cluster: the GitRepository and the paths the
// Kustomizations read; an export into a git work tree written in place, so that git sees exactly
// what changed (nothing for the same inputs, overlay/ only for a customer's value, a dropped
// release's folder), the work tree's own files and a SOPS-encrypted secret kept; bad input
// (URL, branch, path; checked against the work tree where one is) refused with its exit code,
// naming the option, with nothing written. Flux itself reads it in
// test/integration/export-git-flux.test.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { appDir, chartDir, repoRoot, runCli, tempDir } from '../helpers.js';

const dir = tempDir('export-git');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const URL_ = 'https://git.example.com/acme/fleet.git';
const app = [
  '--chart',
  chartDir,
  '--base-values',
  join(appDir, 'values', 'base.yaml'),
  '-f',
  join(appDir, 'examples', 'customer-values.yaml'),
];
const planDir = join(repoRoot, 'test', 'fixtures', 'release-plan');
const planArgs = [
  '--app-dir',
  planDir,
  '--releases-file',
  join(planDir, 'releases.yaml'),
  '-n',
  'shop',
  '--registry',
  'registry.local:5000/shop',
];

const git = async (cwd: string, args: string[]) =>
  (await execa('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args])).stdout;

/** A new work tree on main with one commit (a README of the repository's own). */
async function workTree(name: string): Promise<string> {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  await git(root, ['init', '--quiet', '--initial-branch=main']);
  writeFileSync(join(root, 'README.md'), '# Our fleet\n');
  await git(root, ['add', '-A']);
  await git(root, ['commit', '--quiet', '-m', 'start']);
  return root;
}

/** `export --source git` to URL_, with `args`. */
const exportGit = (args: string[], env?: Record<string, string>) =>
  runCli(['export', '--source', 'git', '--git-url', URL_, ...args], { env });

async function exportOk(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await exportGit(args, env);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stderr;
}

const commitAll = async (root: string) => {
  await git(root, ['add', '-A']);
  await git(root, ['commit', '--quiet', '-m', 'export']);
};
/** What git sees changed since the last commit, untracked files included: `XY path` lines, sorted. */
const changes = async (root: string) =>
  (await git(root, ['status', '--porcelain', '--untracked-files=all'])).split('\n').filter(Boolean).sort();

describe('export --source git', () => {
  it("writes a GitRepository; the Kustomizations read --out's path in its work tree", async () => {
    const root = await workTree('paths');
    const out = join(root, 'clusters', 'prod');
    await exportOk(['--out', out, '--git-branch', 'main', ...planArgs]);
    expect(parseAllDocuments(readFileSync(join(out, 'flux', 'source.yaml'), 'utf8'))[0]!.toJS()).toEqual({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: { name: 'plan-test', namespace: 'flux-system' },
      spec: { interval: '10m', url: URL_, ref: { branch: 'main' } },
    });
    const flux = ['root.yaml', 'kustomizations.yaml'].flatMap((f) =>
      parseAllDocuments(readFileSync(join(out, 'flux', f), 'utf8')).map(
        (d) => d.toJS() as { metadata: { name: string }; spec: { path: string; sourceRef: unknown } },
      ),
    );
    expect(flux.map((k) => [k.metadata.name, k.spec.path, k.spec.sourceRef])).toEqual([
      ['plan-test-flux', './clusters/prod/flux', { kind: 'GitRepository', name: 'plan-test' }],
      ['operator', './clusters/prod/operator/overlay', { kind: 'GitRepository', name: 'plan-test' }],
      ['web', './clusters/prod/web/overlay', { kind: 'GitRepository', name: 'plan-test' }],
      ['report', './clusters/prod/report/overlay', { kind: 'GitRepository', name: 'plan-test' }],
      ['cache', './clusters/prod/cache/overlay', { kind: 'GitRepository', name: 'plan-test' }],
    ]);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '## Propose an upgrade or a change of values as a pull request',
    );
    // The repository's own README at its root is not the export's.
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# Our fleet\n');
  });

  it('outside a work tree, --git-path places the export (default: the root)', async () => {
    const out = join(dir, 'plain');
    await exportOk(['--out', out, '--git-path', './clusters//staging/', ...planArgs]);
    const root = parseAllDocuments(readFileSync(join(out, 'flux', 'root.yaml'), 'utf8'))[0]!.toJS() as {
      spec: { path: string };
    };
    expect(root.spec.path).toBe('./clusters/staging/flux');
    const atRoot = join(dir, 'plain-root');
    await exportOk(['--out', atRoot, ...planArgs]);
    expect(
      (
        parseAllDocuments(readFileSync(join(atRoot, 'flux', 'root.yaml'), 'utf8'))[0]!.toJS() as {
          spec: { path: string };
        }
      ).spec.path,
    ).toBe('./flux');
  });
});

describe('an export into a git work tree changes only what changed', () => {
  it("the same inputs: nothing; a customer value: overlay/ only; .git and the repository's files kept", async () => {
    const root = await workTree('same');
    const out = join(root, 'deploy');
    await exportOk(['--out', out, ...app, '--registry', 'registry.local:5000/shop']);
    await commitAll(root);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain('# Export for GitOps');
    await exportOk(['--out', out, ...app, '--registry', 'registry.local:5000/shop']);
    expect(await changes(root)).toEqual([]);
    const customer = join(dir, 'customer-4.yaml');
    writeFileSync(
      customer,
      readFileSync(join(appDir, 'examples', 'customer-values.yaml'), 'utf8').replace(
        'replicaCount: 3',
        'replicaCount: 4',
      ),
    );
    await exportOk(['--out', out, ...app.slice(0, -1), customer, '--registry', 'registry.local:5000/shop']);
    expect(await changes(root)).toEqual([' M deploy/storefront/overlay/patches/deployment-storefront-web.json']);
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# Our fleet\n');
  });

  it('a release the next export drops: its folder and its Kustomization go, nothing else', async () => {
    const root = await workTree('drop');
    const out = join(root, 'shop');
    await exportOk(['--out', out, ...planArgs]);
    writeFileSync(join(out, 'NOTES.txt'), 'ours\n');
    await commitAll(root);
    await exportOk(['--out', out, ...planArgs], { PLAN_TEST_CACHE: 'false' });
    const cacheFiles = (await git(root, ['ls-files', 'shop/cache'])).split('\n').map((p) => ` D ${p}`);
    expect(cacheFiles.length).toBeGreaterThan(3);
    expect(await changes(root)).toEqual(
      [...cacheFiles, ' M shop/.helm-installer-export', ' M shop/flux/kustomizations.yaml'].sort(),
    );
    expect(readFileSync(join(out, 'NOTES.txt'), 'utf8')).toBe('ours\n');
  });

  it('a secrets/ file encrypted with SOPS is kept, not written again in clear, and named', async () => {
    const root = await workTree('sops');
    const out = join(root, 'deploy');
    await exportOk(['--out', out, ...app, '--registry', 'registry.local:5000/shop']);
    const secret = join(out, 'storefront', 'secrets', 'secret-storefront-db.yaml');
    // What `sops --encrypt` leaves: the values replaced by ENC[...] and a top-level sops: key.
    const encrypted =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: storefront-db\ndata:\n  password: ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi=,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:xyz=]\n  version: 3.9.0\n';
    writeFileSync(secret, encrypted);
    await commitAll(root);
    const stderr = await exportOk(['--out', out, ...app, '--registry', 'registry.local:5000/shop']);
    expect(readFileSync(secret, 'utf8')).toBe(encrypted);
    expect(await changes(root)).toEqual([]);
    expect(stderr).toContain('storefront/secrets/secret-storefront-db.yaml is encrypted (SOPS) and was kept as it is');
  });
});

describe("an export never destroys (issue 36): a user's file and an earlier export, every format", () => {
  const inputs = [...app, '--registry', 'registry.local:5000/shop'];
  const run = (format: string, out: string, extra: string[] = []) =>
    runCli(['export', '--format', format, '--out', out, ...inputs, ...extra]);
  // A chart archive is not byte-identical from one `helm package` to the next.
  const noArchives = (lines: string[]) => lines.filter((l) => !l.endsWith('.tgz'));

  it.each([['rendered'], ['helmrelease']])('--format %s', async (format) => {
    const root = await workTree(`never-${format}`);
    // The case: the work tree's root, holding the repository's README.
    const forced = await run(format, root, ['--force']);
    expect(forced.exitCode, forced.stderr).toBe(2);
    expect(forced.stderr).toContain(
      `--out ${root} holds files no earlier export wrote where this export writes: README.md; they are kept, and nothing was written`,
    );
    const plain = await run(format, root);
    expect(plain.exitCode, plain.stderr).toBe(2);
    expect(plain.stderr).toContain(
      `--out ${root} is in a git work tree, holds files, and no earlier export (no .helm-installer-export)`,
    );
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# Our fleet\n');
    expect(await changes(root)).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(['.git', 'README.md']);

    // A folder of its own: an earlier export, then a file of the user's beside it.
    const out = join(root, 'deploy');
    expect((await run(format, out)).exitCode).toBe(0);
    writeFileSync(join(out, 'NOTES.md'), 'ours\n');
    await commitAll(root);
    for (const extra of [[], ['--force']]) {
      const again = await run(format, out, extra);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(noArchives(await changes(root))).toEqual([]);
      expect(readFileSync(join(out, 'NOTES.md'), 'utf8')).toBe('ours\n');
      expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# Our fleet\n');
      expect(existsSync(join(root, '.git', 'HEAD'))).toBe(true);
    }

    // Outside a work tree, --force over an earlier export and a user's file: the file stays.
    const folder = join(dir, `never-folder-${format}`);
    expect((await run(format, folder)).exitCode).toBe(0);
    const before = readdirSync(folder).sort();
    writeFileSync(join(folder, 'NOTES.md'), 'ours\n');
    const replaced = await run(format, folder, ['--force']);
    expect(replaced.exitCode, replaced.stderr).toBe(0);
    expect(readdirSync(folder).sort()).toEqual([...before, 'NOTES.md'].sort());
    expect(readFileSync(join(folder, 'NOTES.md'), 'utf8')).toBe('ours\n');
  });
});

describe('bad input: exit code, the option named, nothing written', () => {
  const cases: [string, string[], Record<string, string>, number, string][] = [
    [
      'a URL that is not one',
      ['--git-url', 'not a url'],
      {},
      2,
      'invalid --git-url "not a url" (or env HELM_INSTALLER_GIT_URL)',
    ],
    [
      'scp-like syntax',
      ['--git-url', 'git@git.example.com:acme/fleet.git'],
      {},
      2,
      'write it ssh://git@git.example.com/acme/fleet.git',
    ],
    [
      'a scheme Flux does not clone',
      ['--git-url', 'ftp://git.example.com/fleet.git'],
      {},
      2,
      'expected an http://, https:// or ssh:// URL',
    ],
    ['no repository path', ['--git-url', 'https://git.example.com/'], {}, 2, "with the repository's path"],
    [
      'a branch git refuses',
      ['--git-url', URL_, '--git-branch', 'release..1'],
      {},
      2,
      'invalid --git-branch "release..1" (or env HELM_INSTALLER_GIT_BRANCH): expected a branch name git accepts',
    ],
    [
      'a branch git refuses, from the env',
      ['--git-url', URL_],
      { HELM_INSTALLER_GIT_BRANCH: 'feature/x.lock' },
      2,
      'invalid HELM_INSTALLER_GIT_BRANCH="feature/x.lock" (env for --git-branch)',
    ],
    [
      'an absolute path',
      ['--git-url', URL_, '--git-path', '/clusters/prod'],
      {},
      2,
      'invalid --git-path "/clusters/prod" (or env HELM_INSTALLER_GIT_PATH): expected a path inside the repository',
    ],
    [
      'a path that climbs out',
      ['--git-url', URL_, '--git-path', 'clusters/../../etc'],
      {},
      2,
      'climbs out of it with ..',
    ],
    ['--source git without --git-url', [], {}, 2, '--git-url (HELM_INSTALLER_GIT_URL) is not set'],
  ];
  it.each(cases)('%s', async (_label, args, env, code, message) => {
    const out = join(dir, `bad-${readdirSync(dir).length}`);
    const r = await runCli(['export', '--out', out, '--source', 'git', ...args, ...planArgs], { env });
    expect(r.exitCode, r.stderr).toBe(code);
    expect(r.stderr).toContain(message);
    expect(existsSync(out)).toBe(false);
  });

  it('a token in the URL: exit 2, never echoed', async () => {
    const out = join(dir, 'bad-token');
    const r = await runCli([
      'export',
      '--out',
      out,
      '--source',
      'git',
      '--git-url',
      'https://bot:s3cr3t-t0ken@git.example.com/acme/fleet.git',
      ...planArgs,
    ]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('invalid --git-url "https://bot:***@git.example.com/acme/fleet.git"');
    expect(r.stderr).toContain('spec.secretRef');
    expect(r.stderr + r.stdout).not.toContain('s3cr3t-t0ken');
    expect(existsSync(out)).toBe(false);
  });

  it('git options with the OCI source, and --source git with --format helmrelease: exit 2', async () => {
    const oci = await runCli(['export', '--out', join(dir, 'bad-oci'), '--git-url', URL_, ...planArgs]);
    expect(oci.exitCode, oci.stderr).toBe(2);
    expect(oci.stderr).toContain('--git-url (HELM_INSTALLER_GIT_URL) is read with --source git only');
    const hr = await runCli([
      'export',
      '--format',
      'helmrelease',
      '--out',
      join(dir, 'bad-hr'),
      '--source',
      'git',
      '--git-url',
      URL_,
      ...planArgs,
    ]);
    expect(hr.exitCode, hr.stderr).toBe(2);
    expect(hr.stderr).toContain('--source git (HELM_INSTALLER_EXPORT_SOURCE) is for the rendered form');
    expect([existsSync(join(dir, 'bad-oci')), existsSync(join(dir, 'bad-hr'))]).toEqual([false, false]);
  });

  it("in a work tree: a branch it does not have (exit 3), a --git-path that is not --out's place (exit 2), uncommitted changes (exit 2)", async () => {
    const root = await workTree('checks');
    const out = join(root, 'clusters', 'prod');
    const branch = await exportGit(['--out', out, '--git-branch', 'production', ...planArgs]);
    expect(branch.exitCode, branch.stderr).toBe(3);
    expect(branch.stderr).toContain(
      `--git-branch (HELM_INSTALLER_GIT_BRANCH) production is not a branch of the git work tree ${root}`,
    );
    const path = await exportGit(['--out', out, '--git-path', 'clusters/staging', ...planArgs]);
    expect(path.exitCode, path.stderr).toBe(2);
    expect(path.stderr).toContain(
      `--git-path (HELM_INSTALLER_GIT_PATH) is clusters/staging, but --out is at clusters/prod in the git work tree ${root}`,
    );
    expect(await changes(root)).toEqual([]);

    // A remote-tracking branch is one: refs/remotes/origin/production.
    await git(root, ['update-ref', 'refs/remotes/origin/production', 'HEAD']);
    await exportOk(['--out', out, '--git-branch', 'production', ...planArgs]);
    await commitAll(root);
    writeFileSync(join(out, 'web', 'overlay', 'kustomization.yaml'), 'edited by hand\n');
    const dirty = await exportGit(['--out', out, '--git-branch', 'production', ...planArgs]);
    expect(dirty.exitCode, dirty.stderr).toBe(2);
    expect(dirty.stderr).toContain(
      'has uncommitted changes the export would overwrite: clusters/prod/web/overlay/kustomization.yaml',
    );
    expect(readFileSync(join(out, 'web', 'overlay', 'kustomization.yaml'), 'utf8')).toBe('edited by hand\n');
  });
});
