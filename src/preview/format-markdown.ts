// The plan for a pull request or a support ticket (-o markdown, GitHub-flavoured): a summary
// table, then each diff collapsed under <details>, so a long plan stays readable in a review.
import type { PlanEntry, PlanReport } from './plan-types.js';
import {
  countActions,
  countLine,
  crdLine,
  dataAtRiskLines,
  decisionLine,
  objectName,
  ownershipLine,
  recreateLine,
  removedApiLines,
  SIGN,
} from './summary.js';

export function formatMarkdown(report: PlanReport): string {
  const out = [
    `### helm-installer plan: release ${text(report.release)}, namespace ${text(report.namespace)}, chart ${text(report.chart)}`,
    '',
    `**${text(decisionLine(report.decision))}**`,
    '',
  ];
  const removed = removedApiLines(report.removedApis ?? []);
  if (removed.length > 0) out.push(text(removed[0]!), '', ...removed.slice(1).map((l) => `- ${text(l)}`), '');
  const crds = (report.crds ?? []).filter((c) => c.action !== 'unchanged' || c.migrate || c.adopt);
  if (crds.length > 0)
    out.push('CRDs (before helm runs; never deleted):', '', ...crds.map((c) => `- ${text(crdLine(c))}`), '');
  const refusals = report.refusals ?? [];
  if (refusals.length > 0) {
    out.push('The cluster, asked before any change (server-side dry run of the pods, the classes named):', '');
    for (const r of refusals)
      out.push(
        `- **${r.blocks ? 'refused' : 'warning'}** ${text(r.object)}: ${text(r.message)}`,
        ...r.wayOut.map((w) => `  - ${text(w.trim())}`),
      );
    out.push('');
  }
  const risk = dataAtRiskLines(report.dataAtRisk ?? []);
  if (risk.length > 0)
    out.push(
      '**Data at risk** (claims that hold data and that no workload of the new version mounts):',
      '',
      ...risk.map((l) => `- ${text(l)}`),
      '',
    );
  const listed = report.entries.filter((e) => e.action !== 'unchanged' || e.ownership !== undefined);
  if (listed.length > 0)
    out.push(...table(['action', 'kind', 'namespace', 'name', 'fields'], listed.map(objectRow)), '');
  const unchanged = countActions(report.entries).unchanged;
  if (unchanged > 0) out.push(`${unchanged} unchanged`, '');
  out.push(countLine(report.entries), '');
  if (report.hooks.length > 0) {
    out.push('Hooks (helm deletes and re-creates them on every install):', '');
    out.push(...table(['hook', 'kind', 'namespace', 'name'], report.hooks.map(hookRow)), '');
  }
  for (const e of [...listed, ...report.hooks])
    if (e.diff !== '' || e.refused !== undefined || e.recreate !== undefined || e.ownership !== undefined)
      out.push(...details(e), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

// Rows hold Markdown: every cell escaped here, the fields one per line (<br>).
function objectRow(e: PlanEntry): string[] {
  return [e.action, e.kind, e.namespace ?? '', e.name].map(text).concat(e.fields.map(text).join('<br>'));
}

function hookRow(e: PlanEntry): string[] {
  return [e.hook ?? '', e.kind, e.namespace ?? '', e.name].map(text);
}

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

function details(e: PlanEntry): string[] {
  const summary = `${SIGN[e.action]} ${e.action} ${objectName(e)}${e.hook !== undefined ? ` (hook: ${e.hook})` : ''}`;
  const out = ['<details>', `<summary>${html(summary)}</summary>`, ''];
  if (e.refused !== undefined) out.push(`Refused by the API server: ${text(e.refused)}`, '');
  if (e.recreate !== undefined) out.push(`${text(recreateLine(e.recreate))}.`, '');
  if (e.ownership !== undefined) out.push(`${text(ownershipLine(e.ownership))}.`, '');
  if (e.changedBy.length > 0)
    out.push(`Changed by ${text(e.changedBy.join(', '))}: the install reverts that edit.`, '');
  if (e.diff !== '') {
    const fence = '`'.repeat(Math.max(3, longestRun(e.diff, '`') + 1));
    out.push(`${fence}diff`, e.diff.replace(/\n$/, ''), fence, '');
  }
  out.push('</details>');
  return out;
}

/**
 * Plain text inside Markdown: the characters Markdown could read as syntax within a line are
 * backslash-escaped (emphasis, code, links, HTML, entities, strikethrough), `|` included so a
 * table cell cannot end early; line breaks become spaces (a table row is one line).
 */
function text(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ').replace(/[\\`*_[\]<>|~&]/g, '\\$&');
}

function html(s: string): string {
  return s
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

function longestRun(s: string, ch: string): number {
  let best = 0;
  for (const m of s.matchAll(new RegExp(`${ch}+`, 'g'))) best = Math.max(best, m[0].length);
  return best;
}
