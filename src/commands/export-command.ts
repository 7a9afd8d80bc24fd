// `helm-installer export`: what a GitOps engine applies to get the same app as `install`, written
// to a folder (README "Hand it to GitOps: export"). The same inputs as render; no cluster.
import { defineCommand } from '../command.js';
import { commonOptionTable, oneOf, parsePath, parseRegistry, parseTimeout, renderHelmArgs, toCommonOptions } from '../config.js';
import { OptionValueError, UsageError } from '../errors.js';
import { switchOption, value } from '../options.js';
import type { RunState } from '../run-state.js';

const DESCRIPTION = 'write what a GitOps engine (Flux) applies to get the same app: a kustomize base and overlay per release, and the Flux files; no cluster needed';

export const exportDefinition = defineCommand({
  name: 'export',
  description: DESCRIPTION,
  options: {
    ...commonOptionTable,
    out: value('--out <dir>', 'OUT', 'the folder to write (refused when it exists and is not empty, unless --force)', parsePath),
    format: value('--format <format>', 'EXPORT_FORMAT', 'rendered (kustomize base and overlay; the HelmRelease form comes later)', oneOf('rendered'), 'rendered' as const),
    force: switchOption('--force', 'FORCE', 'replace a non-empty --out (only once the new export is complete)'),
    timeout: value('--timeout <duration>', 'TIMEOUT', "each Flux Kustomization's timeout, unless the release plan gives the release its own (Go duration)", parseTimeout, '10m'),
    ociRepository: value('--oci-repository <host/path>', 'OCI_REPOSITORY', 'where the export is pushed as an OCI artifact, for the OCIRepository (default: <registry>/<app>-export)', parseRegistry),
    ociTag: value('--oci-tag <tag>', 'OCI_TAG', "the artifact's tag the OCIRepository follows", parseOciTag, 'latest'),
    ociInsecure: switchOption('--oci-insecure', 'OCI_INSECURE', 'the OCIRepository pulls over plain HTTP (a registry without TLS)'),
    helmArgs: renderHelmArgs(),
  },
  run: async (o, state: RunState) => {
    if (o.out === undefined) throw new UsageError('--out (HELM_INSTALLER_OUT) is required: the folder to write the export to', { hint: 'Add --out DIR, a new or empty folder.' });
    const { exportRendered } = await import('../export/export-rendered.js');
    return exportRendered({ ...toCommonOptions(o), out: o.out, force: o.force, timeout: o.timeout, ociRepository: o.ociRepository, ociTag: o.ociTag, ociInsecure: o.ociInsecure, helmArgs: o.helmArgs }, state);
  },
});

function parseOciTag(raw: string): string {
  const v = raw.trim();
  // The OCI distribution spec's tag grammar.
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(v)) throw new OptionValueError('expected an OCI tag: letters, digits, _ . -, at most 128 characters');
  return v;
}
