// The facts the export works out per release, shared by both forms: the rendered form
// (kustomize base and overlay) and the HelmRelease form (src/export/helmrelease/) take them
// from here, so the two cannot disagree on a namespace, an order or a value layer.
import type { SetArgument } from '../helm/helm-args.js';

export interface ImageRewrite {
  kind: string;
  name: string;
  /** Where in the object, e.g. `spec.template.spec.containers[0].image`. */
  path: string;
  from: string;
  to: string;
}

export interface ExportRelease {
  name: string;
  /** The release's folder in the export and its Flux Kustomization's name (unique in the export). */
  folder: string;
  namespace: string;
  chart: { name: string; version: string; path: string };
  /** Folders of the releases this one waits for (the plan's dependsOn, enabled releases only). */
  dependsOn: string[];
  /** The release's timeout (the plan's, else --timeout): Flux's timeout for it. */
  timeout: string;
  /** The vendor's values files, lowest first (chart defaults are not listed: the chart has them). */
  vendorValues: string[];
  /** The customer's values files and --set arguments, in helm's order. */
  customerValues: { files: string[]; sets: SetArgument[] };
  /** Dotted paths of the values that look secret (src/secrets.ts), vendor's and customer's; never the values. */
  secretValuePaths: string[];
  /** Every image reference the airgap rewrite changed in this release's objects. */
  imageRewrites: ImageRewrite[];
}
