// Whether a chart directory ships CRDs, read from its files before any render: helm passes crds/
// through unrendered, so their presence is known at once. The RBAC preflight asks the CRD verbs
// while helm renders instead of after (a guess: wrong, it costs those few reviews only).
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
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

/**
 * The files helm creates from crds/ before it renders a first install (the chart's and every
 * subchart's: .yaml, .yml and .json, as helm's CRDObjects takes them), each file's text, parent
 * chart first; undefined when that cannot be known from files alone (the chart or a subchart is
 * an archive). A disabled subchart's CRDs are listed too (helm skips them): more, never fewer,
 * than helm creates.
 */
export function chartCrdTexts(chartDir: string): string[] | undefined {
  const texts: string[] = [];
  const walk = (dir: string): boolean => {
    let crdFiles: string[] = [];
    try {
      crdFiles = readdirSync(join(dir, 'crds'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
    } catch {
      // No crds/ here.
    }
    for (const f of crdFiles) texts.push(readFileSync(join(dir, 'crds', f), 'utf8'));
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(join(dir, 'charts'), { withFileTypes: true });
    } catch {
      return true;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) {
        if (!walk(join(dir, 'charts', e.name))) return false;
      } else if (/\.tgz$/.test(e.name)) {
        return false;
      }
    }
    return true;
  };
  return statSync(chartDir).isDirectory() && walk(chartDir) ? texts : undefined;
}

/** metadata.name of every CustomResourceDefinition in crds/ files; undefined when one cannot be read. */
export function crdNames(texts: string[]): string[] | undefined {
  const names: string[] = [];
  for (const text of texts) {
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) return undefined;
      const value = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown } } | null;
      if (value === null || value === undefined) continue;
      if (value.kind !== 'CustomResourceDefinition' || typeof value.metadata?.name !== 'string') return undefined;
      names.push(value.metadata.name);
    }
  }
  return names;
}
