// Names of the generated objects and folders: stable (the same input gives the same names) and
// valid Kubernetes names. A HelmRelease is named after its release; two releases of the same name
// in different namespaces are told apart by their namespace.
import { InvalidInputError } from '../../common/errors.js';
import type { HelmReleaseInput } from './input.js';

// A DNS-1123 subdomain: what ConfigMaps, Secrets and custom resources may be named.
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MAX = 253;

export interface ReleaseNames {
  /** The HelmRelease and its OCIRepository; also the release's folder in the export. */
  object: string;
  vendorValues: string;
  customerValues: string;
  generatedValues: string;
  secretValues: string;
}

/** The names for each release, keyed `namespace/release`. */
export function releaseNames(releases: readonly HelmReleaseInput[]): Map<string, ReleaseNames> {
  const count = new Map<string, number>();
  for (const r of releases) count.set(r.release, (count.get(r.release) ?? 0) + 1);
  const names = new Map<string, ReleaseNames>();
  for (const r of releases) {
    const key = releaseKey(r);
    if (names.has(key))
      throw new InvalidInputError(`release ${key} is given twice`, {
        key: r.release,
        hint: 'Give each release of the plan once.',
      });
    const object = count.get(r.release)! > 1 ? `${r.namespace}-${r.release}` : r.release;
    const made: ReleaseNames = {
      object,
      vendorValues: `${object}-vendor-values`,
      customerValues: `${object}-customer-values`,
      generatedValues: `${object}-generated-values`,
      secretValues: `${object}-secret-values`,
    };
    for (const name of Object.values(made)) checkName(name, r);
    names.set(key, made);
  }
  return names;
}

export function releaseKey(r: { release: string; namespace: string }): string {
  return `${r.namespace}/${r.release}`;
}

function checkName(name: string, r: HelmReleaseInput): void {
  if (name.length <= SUBDOMAIN_MAX && SUBDOMAIN.test(name)) return;
  throw new InvalidInputError(
    `release ${releaseKey(r)}: ${JSON.stringify(name)} is not a valid Kubernetes object name for the HelmRelease form`,
    {
      key: r.release,
      hint: 'Use a release name of lowercase letters, digits and "-" (as helm requires).',
    },
  );
}

/** The OCI tag `helm push` gives a chart version: `+` is not allowed in a tag, helm writes `_`. */
export function chartTag(version: string): string {
  return version.replaceAll('+', '_');
}
