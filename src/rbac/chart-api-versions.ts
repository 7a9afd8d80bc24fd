// The apiVersions a chart directory's templates and CRDs write out literally (`apiVersion: apps/v1`
// at the start of a line), its subcharts' included: a guess of what the render will hold, so the
// RBAC preflight can read their discovery while helm renders. Only a guess: templated apiVersions
// are missed and unused ones included; the preflight itself works from the render. Bounded: small
// files only, and a limited number of them and of apiVersions.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MAX_FILES = 500;
const MAX_FILE_BYTES = 256 * 1024;
const MAX_API_VERSIONS = 16;
const LITERAL = /^apiVersion:[ \t]*["']?([a-z0-9][a-z0-9.-]*\/)?(v[0-9][a-z0-9]*)["']?[ \t]*(?:#.*)?$/gm;

/** Pure: the literal apiVersions in one file's text, in order of first appearance. */
export function literalApiVersions(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(LITERAL)) found.add(`${m[1] ?? ''}${m[2]}`);
  return [...found];
}

/** The literal apiVersions of the chart directory's templates/ and crds/ (subcharts' too); none for an archive or on any read error. */
export function chartApiVersions(chartDir: string): string[] {
  const found = new Set<string>();
  let files = 0;
  // A chart directory: its templates/ and crds/, and each unpacked subchart under charts/.
  const chart = (dir: string, depth: number) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name === 'templates' || entry.name === 'crds') manifests(join(dir, entry.name));
      if (entry.name === 'charts' && depth < 5) {
        for (const sub of readdirSync(join(dir, 'charts'), { withFileTypes: true })) if (sub.isDirectory()) chart(join(dir, 'charts', sub.name), depth + 1);
      }
    }
  };
  const manifests = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (files >= MAX_FILES || found.size >= MAX_API_VERSIONS) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) manifests(path);
      else if (entry.isFile() && /\.(ya?ml|tpl)$/.test(entry.name) && statSync(path).size <= MAX_FILE_BYTES) {
        files++;
        for (const v of literalApiVersions(readFileSync(path, 'utf8'))) if (found.size < MAX_API_VERSIONS) found.add(v);
      }
    }
  };
  try {
    if (statSync(chartDir).isDirectory()) chart(chartDir, 0);
  } catch {
    return [];
  }
  return [...found];
}
