// The helm flags render and images pass to helm template (pure), and the cluster's Capabilities
// as helm template flags.
import { describe, expect, it } from 'vitest';
import { renderHelmArgs } from '../../src/options/config.js';
import { UsageError } from '../../src/common/errors.js';
import { capabilitiesArgs } from '../../src/helm/helm-args.js';
import { checkInstallHelmArgs, parseRenderFlags } from '../../src/helm/render-flags.js';
import { resolveOptions } from '../../src/options/options.js';
import { SecretRegistry } from '../../src/common/secrets.js';

describe('parseRenderFlags', () => {
  it('accepts the flags that shape a render, in every spelling pflag takes, as --flag=value', () => {
    expect(
      parseRenderFlags([
        '--kube-version',
        '1.31',
        '--api-versions',
        'monitoring.coreos.com/v1',
        '-a',
        'batch/v1/CronJob',
        '-aapps/v1',
        '-a=x.io/v2,y.io/v1',
        '--skip-tests',
        '--is-upgrade=true',
      ]),
    ).toEqual([
      '--kube-version=1.31',
      '--api-versions=monitoring.coreos.com/v1',
      '--api-versions=batch/v1/CronJob',
      '--api-versions=apps/v1',
      '--api-versions=x.io/v2,y.io/v1',
      '--skip-tests',
      '--is-upgrade=true',
    ]);
    // --include-crds is accepted but not passed again: every render already includes crds/.
    expect(
      parseRenderFlags([
        '--kube-version=v1.34.4-eks-1a2b3c',
        '--skip-schema-validation',
        '--enable-dns',
        '--include-crds',
        '--include-crds=true',
      ]),
    ).toEqual(['--kube-version=v1.34.4-eks-1a2b3c', '--skip-schema-validation', '--enable-dns']);
    expect(parseRenderFlags([])).toEqual([]);
  });

  it('refuses what cannot work, naming the flag and the way out', () => {
    const cases: [string[], RegExp][] = [
      [
        ['--post-renderer', 'x'],
        /helm flag --post-renderer cannot be used with render or images: the installer runs its own post-renderer/,
      ],
      [['--post-renderer-args=--x'], /helm flag --post-renderer-args cannot be used/],
      [['--output-dir', '/tmp/x'], /helm flag --output-dir cannot be used with render or images: .*stdout/],
      [['-f', 'v.yaml'], /helm flag -f cannot be used .*use helm-installer's own -f\/--values/],
      [['--set-file', 'a=b'], /helm flag --set-file cannot be used/],
      [['--namespace=x'], /helm flag --namespace cannot be used .*-n\/--namespace/],
      [['-s', 'templates/a.yaml'], /helm flag -s cannot be used .*every manifest/],
      [['--no-hooks'], /helm flag --no-hooks cannot be used/],
      [
        ['--include-crds=false'],
        /helm flag --include-crds=false cannot be used with render or images: images and render must see every manifest/,
      ],
      [['--validate'], /helm flag --validate cannot be used .*--kube-version and --api-versions/],
      [['--version', '1.2.3'], /helm flag --version cannot be used .*--chart/],
      [
        ['--wait-for-jobs'],
        /helm flag --wait-for-jobs is not passed to helm template by render or images; allowed: --kube-version/,
      ],
      [['oops'], /unexpected argument "oops"/],
      [['--kube-version'], /--kube-version needs a value/],
      [['--kube-version', 'latest'], /--kube-version "latest": expected a Kubernetes version/],
      [['--api-versions', 'a b'], /--api-versions "a b": expected group\/version/],
      [['--skip-tests=maybe'], /--skip-tests=maybe: expected true or false/],
    ];
    for (const [args, error] of cases) expect(() => parseRenderFlags(args), args.join(' ')).toThrow(error);
  });

  it('is the rest option of render and images: from argv or HELM_INSTALLER_HELM_ARGS, a usage error naming both', () => {
    const table = { helmArgs: renderHelmArgs() };
    const resolve = (given: string[] | undefined, env: Record<string, string>) =>
      resolveOptions(table, { given: { helmArgs: given }, env, ctx: { secrets: new SecretRegistry() } });
    expect(resolve(['--kube-version', '1.31'], {}).helmArgs).toEqual(['--kube-version=1.31']);
    expect(
      resolve(undefined, { HELM_INSTALLER_HELM_ARGS: '--kube-version 1.31  -a monitoring.coreos.com/v1' }).helmArgs,
    ).toEqual(['--kube-version=1.31', '--api-versions=monitoring.coreos.com/v1']);
    const fromArgv = (() => {
      try {
        resolve(['--post-renderer', 'mine'], {});
      } catch (e) {
        return e;
      }
    })();
    expect(fromArgv).toBeInstanceOf(UsageError);
    expect((fromArgv as UsageError).exitCode).toBe(2);
    expect((fromArgv as UsageError).message).toBe(
      "invalid helm arguments after -- (or env HELM_INSTALLER_HELM_ARGS): helm flag --post-renderer cannot be used with render or images: the installer runs its own post-renderer (the image rewrite) and a second one cannot be chained: it would bypass the rewrite; rewrite the manifests after render's output instead",
    );
    expect(() => resolve(undefined, { HELM_INSTALLER_HELM_ARGS: '--output-dir out' })).toThrow(
      /^invalid HELM_INSTALLER_HELM_ARGS="--output-dir out": helm flag --output-dir cannot be used/,
    );
  });
});

describe('checkInstallHelmArgs', () => {
  it("refuses the Capabilities flags helm upgrade lacks, and a post-renderer that would replace the installer's rewrite", () => {
    expect(checkInstallHelmArgs(['--wait-for-jobs', '--description', 'x'], true)).toBeUndefined();
    expect(checkInstallHelmArgs(['--kube-version=1.31'], false)).toMatch(
      /^helm flag --kube-version cannot be passed to install: helm upgrade has no such flag/,
    );
    expect(checkInstallHelmArgs(['-a', 'monitoring.coreos.com/v1'], false)).toMatch(
      /^helm flag -a cannot be passed to install/,
    );
    expect(checkInstallHelmArgs(['--post-renderer', 'mine'], true)).toMatch(
      /^helm flag --post-renderer cannot be passed to install with --registry or --image-pull-secret: helm keeps only the last --post-renderer/,
    );
    expect(checkInstallHelmArgs(['--post-renderer-args=--x'], true)).toMatch(/^helm flag --post-renderer-args cannot/);
    // Without a rewrite of ours, the user's post-renderer is theirs to use.
    expect(checkInstallHelmArgs(['--post-renderer', 'mine'], false)).toBeUndefined();
  });
});

describe('capabilitiesArgs', () => {
  it('gives the version and the API list, split below the kernel limit on one argument', () => {
    expect(capabilitiesArgs({ kubeVersion: 'v1.34.4', apiVersions: ['apps/v1', 'apps/v1/Deployment', 'v1'] })).toEqual([
      '--kube-version=v1.34.4',
      '--api-versions=apps/v1,apps/v1/Deployment,v1',
    ]);
    const many = Array.from({ length: 5000 }, (_, i) => `group${i}.example.com/v1/Kind${i}`);
    const args = capabilitiesArgs({ kubeVersion: 'v1.31.0', apiVersions: many });
    expect(args.length).toBeGreaterThan(2);
    for (const a of args) expect(a.length).toBeLessThan(64 * 1024);
    expect(args.slice(1).flatMap((a) => a.replace('--api-versions=', '').split(','))).toEqual(many);
    expect(capabilitiesArgs({ kubeVersion: 'v1.31.0', apiVersions: [] })).toEqual(['--kube-version=v1.31.0']);
  });
});
