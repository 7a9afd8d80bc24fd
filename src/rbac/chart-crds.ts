// Whether a chart directory ships CRDs, read from its files before any render: helm passes crds/
// through unrendered, so their presence is known at once. The RBAC preflight asks the CRD verbs
// while helm renders instead of after (a guess: wrong, it costs those few reviews only).
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { CRD_VERBS, type Permission } from './required-permissions.js';

/**
 * The CRD verbs (cluster-wide: no namespace's rules review grants them, so they are always asked
 * one by one) when the chart directory ships CRDs in crds/ (its unpacked subcharts' too), which
 * helm passes through unrendered: a guess the run asks while helm renders. None for an archive.
 */
export function crdAccessGuess(chartDir: string): Omit<Permission, 'for'>[] {
  if (crdsIn(chartDir) !== true) return [];
  return CRD_VERBS.map((verb) => ({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb }));
}

/** True: some crds/ has files; false: none has; undefined: a packed subchart was not looked into. */
function crdsIn(chartDir: string): boolean | undefined {
  if (entries(join(chartDir, 'crds')).length > 0) return true;
  let unknown = false;
  for (const sub of entries(join(chartDir, 'charts'))) {
    if (sub.isDirectory()) {
      const found = crdsIn(join(chartDir, 'charts', sub.name));
      if (found) return true;
      if (found === undefined) unknown = true;
    } else if (/\.tgz$|\.tar\.gz$/.test(sub.name)) unknown = true;
  }
  return unknown ? undefined : false;
}

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
