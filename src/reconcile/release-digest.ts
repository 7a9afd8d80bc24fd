// Stage "no-op check": KOTS redeploys on every config change anywhere, so most runs ask for
// exactly what is already deployed. The chart's digest and the digest of the merged values (plus
// the settings that change what helm applies: registry rewrite, extra helm args, our version)
// are kept with each revision as helm release labels; when both equal the deployed revision's
// and it is the last one and healthy, the upgrade is skipped. Pure apart from reading the chart.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { RevisionLabels } from '../cluster/release-secrets.js';

const CHART_DIGEST_LABEL = 'helm-installer/chart-digest';
const VALUES_DIGEST_LABEL = 'helm-installer/values-digest';
/**
 * The inputs as given (each values file's bytes in order, the --set expressions, the settings).
 * KOTS re-renders the same ConfigMap byte for byte on most redeploys: equal inputs and an equal
 * chart give equal merged values, so that check needs no helm run (the values probe is most of a
 * no-op's time). Inputs written differently but equal after the merge still match by VALUES_DIGEST.
 */
export const INPUT_DIGEST_LABEL = 'helm-installer/input-digest';
/** Label values are at most 63 characters: 40 hex digits (160 bits) of sha256. */
const DIGEST_HEX = 40;

export interface ReleaseDigests {
  chart: string;
  values: string;
  input: string;
}

/** What can be known without helm: the chart and the inputs as given. */
export type InputDigests = Pick<ReleaseDigests, 'chart' | 'input'>;

/** What besides the values changes the applied objects. */
export interface ApplySettings {
  registry?: string;
  imagePullSecret?: string;
  imagePaths: string[];
  helmArgs: string[];
  /** Annotates every object: a new slug must reach objects deployed before it (undefined: no change to older digests). */
  appSlug?: string;
  installerVersion: string;
}

/** sha256 of the archive's bytes, or of a directory's files (relative path and content, sorted). */
export function chartDigest(path: string): string {
  const hash = createHash('sha256');
  if (statSync(path).isDirectory()) {
    for (const file of listFiles(path)) {
      hash.update(`${relative(path, file).split(sep).join('/')}\0`);
      hash.update(readFileSync(file));
      hash.update('\0');
    }
  } else {
    hash.update(readFileSync(path));
  }
  return hash.digest('hex').slice(0, DIGEST_HEX);
}

/**
 * The values digest from the layers as written (values-as-written.ts) and the --set expressions,
 * when that reading applies: no helm run. Hashed under its own key, so it never equals a digest
 * of helm's merge (valuesDigest) of other values.
 */
export function writtenValuesDigest(
  written: unknown,
  sets: { kind: string; expression: string }[],
  settings: ApplySettings,
): string {
  return createHash('sha256')
    .update(canonicalJson({ valuesAsWritten: written, sets, settings }))
    .digest('hex')
    .slice(0, DIGEST_HEX);
}

export function valuesDigest(mergedValues: unknown, settings: ApplySettings): string {
  return createHash('sha256')
    .update(canonicalJson({ values: mergedValues, settings }))
    .digest('hex')
    .slice(0, DIGEST_HEX);
}

/** `files`: each values file's bytes, in the order helm layers them. */
export function inputDigest(
  files: { source: string; content: Buffer }[],
  sets: { kind: string; expression: string }[],
  settings: ApplySettings,
): string {
  const hash = createHash('sha256');
  for (const f of files) {
    hash.update(`${f.source}\0${f.content.length}\0`);
    hash.update(f.content);
  }
  hash.update(canonicalJson({ sets, settings }));
  return hash.digest('hex').slice(0, DIGEST_HEX);
}

export function digestLabels(d: ReleaseDigests): Record<string, string> {
  return { [CHART_DIGEST_LABEL]: d.chart, [VALUES_DIGEST_LABEL]: d.values, [INPUT_DIGEST_LABEL]: d.input };
}

export type NoOpDecision = { unchanged: true; revision: number } | { unchanged: false; reason: string };

/**
 * Pure. `records` are the release's non-superseded revisions (oldest first): the deployed one and
 * anything after it. Unchanged only when the newest is deployed and carries equal digests.
 */
export function decideNoOp(records: RevisionLabels[], want: Omit<ReleaseDigests, 'input'>): NoOpDecision {
  const last = records.at(-1);
  if (!last) return { unchanged: false, reason: 'no release yet' };
  if (last.status !== 'deployed')
    return { unchanged: false, reason: `last revision ${last.revision} is ${last.status}` };
  const chart = last.labels[CHART_DIGEST_LABEL];
  const values = last.labels[VALUES_DIGEST_LABEL];
  if (!chart || !values)
    return {
      unchanged: false,
      reason: `revision ${last.revision} carries no digests (deployed by another tool or an older installer)`,
    };
  if (chart !== want.chart) return { unchanged: false, reason: 'chart changed' };
  if (values !== want.values) return { unchanged: false, reason: 'values or settings changed' };
  return { unchanged: true, revision: last.revision };
}

/** JSON with object keys sorted, so equal data always gives equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(p));
    else if (entry.isFile()) out.push(p);
  }
  return out.sort();
}

/**
 * Pure. The check that needs no helm run: the newest revision is deployed with an equal chart and
 * equal inputs as given. Anything else is "not known yet", not "changed": decideNoOp then decides
 * on the merged values.
 */
export function sameInputs(records: RevisionLabels[], want: InputDigests): { revision: number } | undefined {
  const last = records.at(-1);
  if (!last || last.status !== 'deployed') return undefined;
  const same = last.labels[CHART_DIGEST_LABEL] === want.chart && last.labels[INPUT_DIGEST_LABEL] === want.input;
  return same ? { revision: last.revision } : undefined;
}
