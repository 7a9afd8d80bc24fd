// The facts the export works out per release, shared by both forms: the rendered form
// (kustomize base and overlay) and the HelmRelease form (src/export/helmrelease/) take them
// from here, so the two cannot disagree on a namespace, an order or a value layer.
import type { SetArgument } from '../helm/helm-args.js';

/** One place where the airgap rewrite changed an image reference (both forms list them). */
export interface ImageRewrite {
  kind: string;
  name: string;
  namespace?: string;
  /** Where in the object, as the image finder writes it: `spec.template.spec.containers[0].image`. */
  path: string;
  /** The reference as the chart wrote it (`nginx:1.27`, `docker.io/bitnami/redis@sha256:...`). */
  from: string;
  /** What our install writes instead (`registry.local:5000/app/nginx:1.27`). */
  to: string;
  /** Set when the reference is part of a longer string (a flag, an env value, ConfigMap data): what names it. */
  via?: string;
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
  /** Dotted paths of the values that look secret (src/common/secrets.ts), vendor's and customer's; never the values. */
  secretValuePaths: string[];
  /** Every image reference the airgap rewrite changed in this release's objects. */
  imageRewrites: ImageRewrite[];
}
