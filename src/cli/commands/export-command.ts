// `helm-installer export`: what a GitOps engine applies to get the same app as `install`, written
// to a folder (README "Hand it to GitOps: export"). The same inputs as render; no cluster.
import { defineCommand } from '../command.js';
import {
  commonOptionTable,
  oneOf,
  parseNamespace,
  parsePath,
  parseRegistry,
  parseTimeout,
  renderHelmArgs,
  toCommonOptions,
} from '../../options/config.js';
import { OptionValueError, UsageError } from '../../common/errors.js';
import { switchOption, value } from '../../options/options.js';
import type { RunState } from '../../run/run-state.js';
import { installOptionTable } from './install-options.js';
import { resolveInput } from '../../inputs/app-input.js';
import { maskGitUrl, parseGitBranch, parseGitPath, parseGitUrl } from '../../export/git-options.js';

// Install's own options, same flags and variables: a HelmRelease says what install would do.
const { historyMax, takeOwnership, crds, drift, driftIgnore, driftIgnoreFile, test, testTimeout, testFailure } =
  installOptionTable;

const DESCRIPTION =
  'write what a GitOps engine (Flux) applies to get the same app: a kustomize base and overlay per release and the Flux files, or (--format helmrelease) a HelmRelease and chart per release; no cluster needed';

export const exportDefinition = defineCommand({
  name: 'export',
  description: DESCRIPTION,
  options: {
    ...commonOptionTable,
    out: value(
      '--out <dir>',
      'OUT',
      'the folder to write (refused when it exists and is not empty, unless --force)',
      parsePath,
    ),
    format: value(
      '--format <format>',
      'EXPORT_FORMAT',
      'rendered (kustomize base and overlay, Flux Kustomizations) or helmrelease (Flux HelmReleases and the charts)',
      oneOf('rendered', 'helmrelease'),
      'rendered' as 'rendered' | 'helmrelease',
    ),
    force: switchOption(
      '--force',
      'FORCE',
      'write into a non-empty --out: only what an earlier export wrote is replaced; other files stay (once the new export is complete)',
    ),
    timeout: value(
      '--timeout <duration>',
      'TIMEOUT',
      "each Flux Kustomization's or HelmRelease's timeout, unless the release plan gives the release its own (Go duration)",
      parseTimeout,
      '10m',
    ),
    ociRepository: value(
      '--oci-repository <host/path>',
      'OCI_REPOSITORY',
      'where the export is pushed as an OCI artifact, for the OCIRepository (default: <registry>/<app>-export)',
      parseRegistry,
    ),
    ociTag: value('--oci-tag <tag>', 'OCI_TAG', "the artifact's tag the OCIRepository follows", parseOciTag, 'latest'),
    ociInsecure: switchOption(
      '--oci-insecure',
      'OCI_INSECURE',
      'the OCIRepository pulls over plain HTTP (a registry without TLS)',
    ),
    source: value(
      '--source <oci|git>',
      'EXPORT_SOURCE',
      'rendered: what Flux reads the export from: an OCI artifact (OCIRepository) or a branch of a git repository (GitRepository)',
      oneOf('oci', 'git'),
      'oci' as 'oci' | 'git',
    ),
    // A URL with a token in it is refused; the error echoes it masked.
    gitUrl: {
      ...value(
        '--git-url <url>',
        'GIT_URL',
        'with --source git: the repository the export is committed to (http://, https:// or ssh://; no credentials in it)',
        parseGitUrl,
      ),
      echo: maskGitUrl,
    },
    gitBranch: value(
      '--git-branch <branch>',
      'GIT_BRANCH',
      'with --source git: the branch Flux follows',
      parseGitBranch,
      'main',
    ),
    gitPath: value(
      '--git-path <path>',
      'GIT_PATH',
      "with --source git: the export's folder in the repository (default: --out's path in its git work tree, else the root)",
      parseGitPath,
    ),
    fluxNamespace: value(
      '--flux-namespace <ns>',
      'FLUX_NAMESPACE',
      'where the Flux objects go (rendered: the OCIRepository and Kustomizations; helmrelease: the HelmReleases, their OCIRepositories and values)',
      parseNamespace,
      'flux-system',
    ),
    chartRepositoryPath: value(
      '--chart-repository-path <path>',
      'CHART_REPOSITORY_PATH',
      'helmrelease: the repository folder under --registry the charts are pushed to',
      parseRepositoryPath,
      'charts',
    ),
    historyMax,
    takeOwnership,
    crds,
    drift,
    driftIgnore,
    driftIgnoreFile,
    test,
    testTimeout,
    testFailure,
    helmArgs: renderHelmArgs(),
  },
  run: async (o, state: RunState) => {
    if (o.out === undefined)
      throw new UsageError('--out (HELM_INSTALLER_OUT) is required: the folder to write the export to', {
        hint: 'Add --out DIR, a new or empty folder.',
      });
    const common = toCommonOptions(o);
    const input = resolveInput(common, state.progress);
    if (o.format === 'helmrelease') {
      if (o.source === 'git')
        throw new UsageError(
          '--source git (HELM_INSTALLER_EXPORT_SOURCE) is for the rendered form; --format helmrelease takes its charts from --registry',
          { hint: 'Leave --source out with --format helmrelease, or export --format rendered --source git.' },
        );
      const { exportHelmRelease } = await import('../../export/export-helmrelease.js');
      const { timeout, ociInsecure, fluxNamespace, chartRepositoryPath, helmArgs } = o;
      const install = {
        historyMax: o.historyMax,
        takeOwnership: o.takeOwnership,
        crds: o.crds,
        drift: o.drift,
        driftIgnore: o.driftIgnore,
        driftIgnoreFile: o.driftIgnoreFile,
      };
      const tests = { test: o.test, testTimeout: o.testTimeout, testFailure: o.testFailure };
      return exportHelmRelease(
        {
          ...common,
          out: o.out,
          force: o.force,
          timeout,
          ociInsecure,
          fluxNamespace,
          chartRepositoryPath,
          helmArgs,
          ...install,
          ...tests,
        },
        state,
        input,
      );
    }
    const { exportRendered } = await import('../../export/export-rendered.js');
    const git = { source: o.source, gitUrl: o.gitUrl, gitBranch: o.gitBranch, gitPath: o.gitPath };
    return exportRendered(
      {
        ...common,
        out: o.out,
        force: o.force,
        timeout: o.timeout,
        ociRepository: o.ociRepository,
        ociTag: o.ociTag,
        ociInsecure: o.ociInsecure,
        fluxNamespace: o.fluxNamespace,
        helmArgs: o.helmArgs,
        ...git,
      },
      state,
      input,
    );
  },
});

function parseOciTag(raw: string): string {
  const v = raw.trim();
  // The OCI distribution spec's tag grammar.
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(v))
    throw new OptionValueError('expected an OCI tag: letters, digits, _ . -, at most 128 characters');
  return v;
}

function parseRepositoryPath(raw: string): string {
  const v = raw.trim().replace(/^\/+|\/+$/g, '');
  // The OCI distribution spec's repository name components, joined by '/'.
  if (!/^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/.test(v))
    throw new OptionValueError('expected a repository path: lowercase letters, digits, . _ - and /, e.g. charts');
  return v;
}
