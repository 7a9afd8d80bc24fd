// The plan for a person at a terminal (or a Job's log): the decision first, then each object that
// would change with its fields and diff, hooks apart, the count last.
import type { PlanAction, PlanCrd, PlanEntry, PlanRefusal, PlanReport } from './plan-types.js';
import {
  countActions,
  countLine,
  crdLine,
  dataAtRiskLines,
  decisionLine,
  objectName,
  oneLine,
  ownershipLine,
  recreateLine,
  removedApiLines,
  SIGN,
} from './summary.js';

// ANSI SGR colours, terraform's: green adds, yellow changes, red removes.
const GREEN = 32;
const YELLOW = 33;
const RED = 31;
const COLOR: Record<PlanAction, number | undefined> = {
  create: GREEN,
  change: YELLOW,
  delete: RED,
  unchanged: undefined,
};
const INDENT = '    ';

type Paint = (color: number | undefined, text: string) => string;

/**
 * Colour when the output is a terminal and NO_COLOR is not set to a non-empty value
 * (https://no-color.org). A Job's log is not a TTY: no escape codes in `kubectl logs`.
 */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/** Unchanged objects are counted, not listed. Ends with the count line and a newline. */
export function formatText(report: PlanReport, o: { color: boolean }): string {
  const paint: Paint = (color, text) => (o.color && color !== undefined ? `\u001b[${color}m${text}\u001b[0m` : text);
  const lines = [
    `Plan for release ${report.release} in namespace ${report.namespace}, chart ${oneLine(report.chart)}`,
    oneLine(decisionLine(report.decision)),
    '',
  ];
  const refused = report.entries.filter((e) => e.ownership?.outcome === 'refused').length;
  if (refused > 0)
    lines.push(
      `Install would be refused (exit 4): ${refused} object(s) belong to another release (marked below); nothing would change.`,
      '',
    );
  const removed = removedApiLines(report.removedApis ?? []);
  if (removed.length > 0) lines.push(removed[0]!, ...removed.slice(1).map((l) => `${INDENT}${l}`), '');
  lines.push(...crdLines(report.crds ?? []));
  lines.push(...refusalLines(report.refusals ?? []));
  const risk = dataAtRiskLines(report.dataAtRisk ?? []);
  if (risk.length > 0)
    lines.push(
      'Data at risk (claims that hold data and that no workload of the new version mounts):',
      ...risk.map((l) => `${INDENT}${l}`),
      '',
    );
  // An unchanged object helm adopts (or install refuses) is listed for its owner.
  for (const e of report.entries)
    if (e.action !== 'unchanged' || e.ownership !== undefined) lines.push(...entryLines(e, paint), '');
  if (report.hooks.length > 0) {
    lines.push('Hooks (helm deletes and re-creates them on every install):', '');
    for (const e of report.hooks) lines.push(...entryLines(e, paint), '');
  }
  const unchanged = countActions(report.entries).unchanged;
  if (unchanged > 0) lines.push(`${unchanged} unchanged`);
  lines.push(countLine(report.entries));
  return `${lines.join('\n')}\n`;
}

/** The CRDs install changes before helm, each with what changes; unchanged ones counted. */
function crdLines(crds: readonly PlanCrd[]): string[] {
  const changing = crds.filter((c) => c.action !== 'unchanged' || c.migrate || c.adopt);
  if (changing.length === 0) return crds.length > 0 ? [`CRDs: ${crds.length} unchanged`, ''] : [];
  const lines = ['CRDs (before helm runs; never deleted):'];
  for (const c of changing) lines.push(`${INDENT}${crdLine(c)}`);
  const unchanged = crds.length - changing.length;
  return [...lines, ...(unchanged > 0 ? [`${INDENT}${unchanged} unchanged`] : []), ''];
}

/** What the API server says of the pods before any change, each with its way out. */
function refusalLines(refusals: readonly PlanRefusal[]): string[] {
  if (refusals.length === 0) return [];
  const lines = ['The cluster, asked before any change (server-side dry run of the pods, the classes named):'];
  for (const r of refusals) {
    lines.push(`${INDENT}${r.blocks ? 'refused' : 'warning'}: ${r.object}: ${oneLine(r.message)}`);
    for (const w of r.wayOut) lines.push(`${INDENT}${INDENT}${w}`);
  }
  return [...lines, ''];
}

function entryLines(e: PlanEntry, paint: Paint): string[] {
  const hook = e.hook !== undefined ? ` (hook: ${oneLine(e.hook)})` : '';
  const out = [paint(COLOR[e.action], `${SIGN[e.action]} ${e.action} ${objectName(e)}${hook}`)];
  if (e.refused !== undefined) out.push(`${INDENT}refused by the API server: ${oneLine(e.refused)}`);
  if (e.recreate !== undefined) out.push(`${INDENT}${recreateLine(e.recreate)}`);
  if (e.ownership !== undefined) out.push(`${INDENT}${oneLine(ownershipLine(e.ownership))}`);
  if (e.fields.length > 0) out.push(`${INDENT}fields: ${e.fields.join(', ')}`);
  if (e.changedBy.length > 0) out.push(`${INDENT}changed by ${e.changedBy.join(', ')}: the install reverts that edit`);
  for (const line of diffLines(e.diff)) out.push(paint(lineColor(line), `${INDENT}${line}`));
  return out;
}

function diffLines(diff: string): string[] {
  return diff === '' ? [] : diff.replace(/\n$/, '').split('\n');
}

function lineColor(line: string): number | undefined {
  if (line.startsWith('+++') || line.startsWith('---')) return undefined;
  if (line.startsWith('+')) return GREEN;
  if (line.startsWith('-')) return RED;
  return undefined;
}
