// Report: the success summary an admin reads (the last lines of the log, on stderr), and what the
// run found and did about drift: every object named with the fields that differed and who had
// changed them (values only in the log, secret ones masked by the drift check itself).
import { parseAllDocuments } from 'yaml';
import type { ObjectDrift } from '../drift/detect-drift.js';
import type { ImmutableChange } from '../drift/immutable-changes.js';
import { HelmOperationError, InstallerError } from '../common/errors.js';
import { successSummary, writeSummary, type SuccessReport } from '../run/report.js';
import type { OutcomeReason } from '../run/outcome.js';
import { recordOutcome } from '../run/record.js';
import { objectName } from './actions/correct-drift.js';
import { describeMapping } from '../drift/map-removed-apis.js';
import type { Action, MappedRecord } from './decide.js';
import { type InstallRun } from './install-run.js';
import { chartLabel, type ClusterRun } from '../run/run-context.js';

type Told = { reason: OutcomeReason; note: string };

function summary(
  run: InstallRun,
  cluster: ClusterRun,
  r: Pick<SuccessReport, 'action' | 'revision' | 'details'>,
  told: Told,
  mapped: MappedRecord[] = [],
): number {
  // The records rewritten before helm: named in the summary and the Event whatever the run did next.
  const lines = mappedLines(mapped, cluster.namespace);
  if (lines.length > 0) {
    r = { ...r, details: [...lines, ...(r.details ?? [])] };
    told = { ...told, note: `${told.note}; removed APIs mapped in the stored record: ${mappedNote(mapped)}` };
  }
  const seconds = (Date.now() - run.started) / 1000;
  if (run.member) run.member.outcome = { action: r.action, revision: r.revision, chart: chartLabel(run) };
  const { release, chart, started, state } = run;
  recordOutcome(state, {
    ...told,
    release,
    namespace: cluster.namespace,
    chartVersion: chart.version,
    revision: r.revision,
    started,
  });
  writeSummary(undefined, {
    summary: successSummary({
      release: run.release,
      namespace: cluster.namespace,
      chart: chartLabel(run),
      seconds,
      ...r,
    }),
  });
  return 0;
}

/** `recorded`: the digests the decision compared, logged with "unchanged". */
export function reportSkip(
  run: InstallRun,
  cluster: ClusterRun,
  action: Extract<Action, { kind: 'skip' }>,
  recorded: Record<string, string>,
  mapped: MappedRecord[] = [],
): number {
  const { release } = run;
  if (action.status === 'drifted') {
    logDrift(run, action.drift, 'drift found (--drift warn: nothing changed)');
    const details = ['drift found, left as it is (--drift warn):', ...describeDrift(action.drift)];
    return summary(
      run,
      cluster,
      { action: 'unchanged', revision: action.revision, details },
      {
        reason: 'DriftFound',
        note: `${action.drift.length} object(s) drifted from revision ${action.revision}, left as they are (--drift warn): ${names(action.drift)}`,
      },
      mapped,
    );
  }
  run.logger.info(
    { release, namespace: cluster.namespace, revision: action.revision, ...recorded },
    `unchanged: chart and values equal revision ${action.revision}, which is deployed and healthy; no upgrade`,
  );
  return summary(
    run,
    cluster,
    { action: 'unchanged', revision: action.revision },
    {
      reason: 'Unchanged',
      note: `revision ${action.revision} is deployed and healthy, chart and values unchanged: nothing to do`,
    },
    mapped,
  );
}

export function reportCorrected(
  run: InstallRun,
  cluster: ClusterRun,
  revision: number,
  corrected: ObjectDrift[],
  mapped: MappedRecord[] = [],
): number {
  logDrift(run, corrected, 'drift corrected');
  run.logger.info(
    { release: run.release, revision, objects: corrected.length },
    `drift corrected: ${corrected.length} object(s) put back as revision ${revision} applied them`,
  );
  const details = ['put back as the release applied them:', ...describeDrift(corrected)];
  return summary(
    run,
    cluster,
    { action: 'drift corrected in', revision, details },
    {
      reason: 'DriftCorrected',
      note: `${corrected.length} object(s) put back as revision ${revision} applied them: ${names(corrected)}`,
    },
    mapped,
  );
}

export function reportUpgraded(
  run: InstallRun,
  cluster: ClusterRun,
  r: {
    everDeployed: boolean;
    revision: number | undefined;
    drift: ObjectDrift[];
    manifests: string;
    recreated?: ImmutableChange[];
    mapped?: MappedRecord[];
  },
): number {
  // Drift in an object the new chart no longer has is not drift: helm prunes the object.
  const drift = stillInChart(r.drift, r.manifests, cluster.namespace);
  const recreated = r.recreated ?? [];
  if (drift.length > 0) logDrift(run, drift, 'drift taken back by the upgrade');
  run.logger.info({ release: run.release, revision: r.revision }, 'done');
  const details = [
    ...(recreated.length > 0
      ? [
          'recreated, as fields that cannot change changed:',
          ...recreated.map((c) => `${objectName(c)}: ${c.fields.join(', ')}`),
        ]
      : []),
    ...(drift.length > 0 ? ['the upgrade also put back what had drifted:', ...describeDrift(drift)] : []),
  ];
  const alsoRecreated = recreated.length > 0 ? `; recreated (fields that cannot change): ${names(recreated)}` : '';
  const told: Told = r.everDeployed
    ? {
        reason: 'Upgraded',
        note: `upgraded to revision ${r.revision} (chart ${chartLabel(run)})${alsoRecreated}${drift.length > 0 ? `; drift taken back: ${names(drift)}` : ''}`,
      }
    : { reason: 'Installed', note: `installed as revision ${r.revision} (chart ${chartLabel(run)})` };
  return summary(
    run,
    cluster,
    { action: r.everDeployed ? 'upgraded' : 'installed', revision: r.revision, details },
    told,
    r.mapped,
  );
}

/** Pure: the summary's lines for the records mapped (each mapping, and where each original is kept). */
function mappedLines(mapped: MappedRecord[], namespace: string): string[] {
  return mapped
    .filter((m) => m.mappings.length > 0)
    .flatMap((m) => [
      `removed APIs mapped in the stored record of revision ${m.revision} (the cluster no longer serves them; the original is kept in Secret ${namespace}/${m.copy}):`,
      ...m.mappings.map(describeMapping),
    ]);
}

/** Pure: the mappings in one line, for an Event's note. */
function mappedNote(mapped: MappedRecord[]): string {
  const all = mapped.flatMap((m) => m.mappings);
  const shown = all.slice(0, 5).map((m) => `${m.kind}/${m.name} ${m.from} -> ${m.to ?? 'dropped'}`);
  return all.length > 5 ? `${shown.join(', ')} and ${all.length - 5} more` : shown.join(', ');
}

/** Helm's failure after a drift correction that failed: the objects and why are named. */
export function withDriftNamed(error: unknown, notPutBack: { drift: ObjectDrift; reason: string }[]): unknown {
  if (notPutBack.length === 0 || !(error instanceof InstallerError)) return error;
  const [first = '', ...rest] = error.message.split('\n');
  const lines = [
    first,
    'drift that could not be put back before this upgrade:',
    ...notPutBack.map((f) => `  ${objectName(f.drift)}: ${f.reason}`),
    ...rest,
  ];
  const hint =
    'Delete each object named above as drifted (the next run creates it again as the release has it), then run again.';
  return new HelmOperationError(lines.join('\n'), { hint, cause: error });
}

/** One line per object: missing, or the fields that differ and who changed them. */
function describeDrift(drift: ObjectDrift[]): string[] {
  return drift.map((d) => {
    if (d.missing) return `${objectName(d)}: missing`;
    const fields = d.fields.map((f) => `${f.path}${f.manager ? ` (changed by ${f.manager})` : ''}`);
    return `${objectName(d)}: ${fields.join(', ')}`;
  });
}

/** The drifted objects by name, a few at most: an Event's note is one line. */
function names(drift: Pick<ObjectDrift, 'kind' | 'namespace' | 'name'>[]): string {
  const shown = drift.slice(0, 5).map((d) => objectName(d));
  return drift.length > 5 ? `${shown.join(', ')} and ${drift.length - 5} more` : shown.join(', ');
}

function logDrift(run: InstallRun, drift: ObjectDrift[], message: string): void {
  for (const d of drift)
    run.logger.warn({ object: objectName(d), missing: d.missing, fields: d.fields }, `${message}: ${objectName(d)}`);
}

/** Pure: the drifted objects that the rendered chart still has. */
function stillInChart(drift: ObjectDrift[], manifests: string, releaseNamespace: string): ObjectDrift[] {
  if (drift.length === 0) return drift;
  const keys = new Set<string>();
  for (const doc of parseAllDocuments(manifests)) {
    const o = doc.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null;
    if (o?.kind && o.metadata?.name) keys.add(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  }
  // A namespaced object rendered without a namespace lands in the release namespace.
  return drift.filter(
    (d) =>
      keys.has(`${d.kind}/${d.namespace ?? ''}/${d.name}`) ||
      (d.namespace === releaseNamespace && keys.has(`${d.kind}//${d.name}`)),
  );
}
