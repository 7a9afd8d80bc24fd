// What the HelmRelease form of `export` needs to know about each release: the facts our install
// works out (values layers, secret paths, drift and test options, the airgap rewrite), gathered by
// the export command and handed over as plain data, so that writing the files stays pure.
import type { IgnoreRule } from '../../drift/ignore-rules.js';
import type { DriftMode } from '../../reconcile/decide.js';
import type { TestFailureAction } from '../../reconcile/install-options.js';
import type { CrdPolicy } from '../../crds/crd-decision.js';
import type { ImageRewrite } from '../export-release.js';

/** A values tree as helm reads it: a map at the top. */
export type Values = Record<string, unknown>;

/** Where a value sits in a values tree: map keys and list indexes, from the top. */
export type ValuePath = Array<string | number>;

export interface HelmReleaseInput {
  release: string;
  /** The release's namespace (helm's --namespace): where its objects and its records live. */
  namespace: string;
  /** The chart, as the export writes it: `<release>/chart/<name>-<version>.tgz`, then pushed with `helm push`. */
  chart: { name: string; version: string };
  /** Releases of the same export that must be Ready first (the release plan's dependsOn). */
  dependsOn: Array<{ release: string; namespace: string }>;
  /** helm's --timeout, a Go duration (`10m`). */
  timeout: string;
  /** helm's --history-max (0 = all revisions). */
  historyMax: number;
  takeOwnership: 'first-install' | 'always' | 'never';
  /** install's --crds: Flux's install.crds and upgrade.crds (it has no stored-version migration). */
  crds: CrdPolicy;
  /** The value layers, in our order: later ones win. `generated`: the airgap's registry hints. */
  values: { vendor: Values; customer: Values; generated?: Values };
  /** Values that look secret (secretValuePaths finds them): written only to the Secret manifest. */
  secretPaths: ValuePath[];
  drift: { mode: DriftMode; ignore: IgnoreRule[] };
  test: { enabled: boolean; timeout: string; failure: TestFailureAction };
  /** Every reference the airgap rewrite changed in this release's objects. */
  images: ImageRewrite[];
  /** The Secret our rewrite adds to every pod spec's imagePullSecrets (--image-pull-secret). */
  imagePullSecret?: string;
  /** The KOTS app slug our rewrite sets as the kots.io/app-slug annotation (kots remove --undeploy finds the objects by it). */
  appSlug?: string;
}

export interface HelmReleaseOptions {
  /** The customer's registry the charts are pushed to (`host[:port][/namespace]`). */
  registry: {
    address: string;
    /** Repository folder under the address the charts go to; `charts` when absent. */
    chartPath?: string;
    /** A plain-HTTP registry (Flux's OCIRepository `insecure`). */
    insecure?: boolean;
    /** A Secret (type dockerconfigjson, in `namespace`) Flux pulls the charts with. */
    pullSecretName?: string;
  };
  /** Where the Flux objects (HelmRelease, OCIRepository, values) live; `flux-system` when absent. */
  namespace?: string;
  /** How often Flux checks the chart and the release; `10m` when absent. */
  interval?: string;
}

export interface ExportFile {
  /** Relative to the export's folder. */
  path: string;
  content: string;
  /** The Secret manifest: the README tells the user to encrypt it or replace it. */
  secret?: boolean;
}

/** What our install does that this form cannot say, per release: never silently lost. */
export interface NotExpressible {
  release: string;
  what: string;
}

export interface HelmReleaseFiles {
  files: ExportFile[];
  notes: NotExpressible[];
}
