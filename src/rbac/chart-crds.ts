// Whether a chart directory ships CRDs, read from its files before any render: helm passes crds/
// through unrendered, so their presence is known at once. The RBAC preflight asks the CRD verbs
// while helm renders instead of after (a guess: wrong, it costs those few reviews only).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CRD_VERBS, type Permission } from './required-permissions.js';

/**
 * The CRD verbs (cluster-wide: no namespace's rules review grants them, so they are always asked
 * one by one) when the chart directory ships CRDs in crds/ (its unpacked subcharts' too), which
 * helm passes through unrendered: a guess the run asks while helm renders. None for an archive.
 */
export function crdAccessGuess(chartDir: string): Omit<Permission, 'for'>[] {
  const hasCrds = (dir: string) => {
    try {
      return readdirSync(join(dir, 'crds')).length > 0;
    } catch {
      return false;
    }
  };
  let subcharts: string[] = [];
  try {
    subcharts = readdirSync(join(chartDir, 'charts'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(chartDir, 'charts', d.name));
  } catch {
    // No charts/ directory, or an archive.
  }
  if (![chartDir, ...subcharts].some(hasCrds)) return [];
  return CRD_VERBS.map((verb) => ({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb }));
}
