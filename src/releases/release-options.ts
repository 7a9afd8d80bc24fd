// Each release of a plan is installed as a single chart is: install's options with the release's
// chart, name, namespace, vendor values and timeout. The customer's values are shared out by
// name, so one mounted ConfigMap can hold every release's values: the file `<release>.yaml` (or
// .yml) goes to that release, and `--set <release>:key=value` too. A file or --set that names no
// release of the plan is refused (exit 3): customer values silently dropped would be a trap.
import { basename } from 'node:path';
import type { SetArgument } from '../helm/helm-args.js';
import { InvalidInputError } from '../errors.js';
import type { InstallOptions } from '../install/install-options.js';
import { expandValuesPath } from '../values.js';
import type { CommonOptions } from '../config.js';
import type { PlannedRelease } from './plan-file.js';
import type { GraphRelease } from './plan-graph.js';

export interface SharedValues {
  files: Map<string, string[]>;
  sets: Map<string, SetArgument[]>;
}

const HINT = 'With a release plan, name each customer values file after its release (<release>.yaml) and prefix each --set with its release (--set <release>:key=value).';

/** Pure but for listing the --values directories. `names`: every release name of the plan. */
export function shareValues(o: Pick<InstallOptions, 'values' | 'sets'>, names: string[]): SharedValues {
  const files = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const file of o.values.flatMap(expandValuesPath)) {
    const name = basename(file).replace(/\.ya?ml$/, '');
    const list = files.get(name);
    if (!list) throw new InvalidInputError(`customer values file ${file} names no release of the plan (releases: ${names.join(', ')})`, { file, hint: HINT });
    list.push(file);
  }
  const sets = new Map<string, SetArgument[]>(names.map((n) => [n, []]));
  for (const s of o.sets) {
    const m = /^([a-z0-9][a-z0-9.-]*):(.*)$/s.exec(s.expression);
    const list = m && sets.get(m[1]!);
    if (!m || !list) throw new InvalidInputError(`--${s.kind} ${s.expression.split('=')[0]}=... names no release of the plan (releases: ${names.join(', ')})`, { key: `--${s.kind}`, hint: HINT });
    list.push({ kind: s.kind, expression: m[2]! });
  }
  return { files, sets };
}

/** Any command's options for one release of the plan: its chart, name, namespace and values. */
export function chartOptions<O extends CommonOptions>(o: O, r: Pick<PlannedRelease, 'name' | 'chart' | 'values' | 'namespace'>, shared: SharedValues): O {
  return {
    ...o,
    releasesFile: undefined,
    chart: r.chart,
    release: r.name,
    namespace: r.namespace ?? o.namespace,
    baseValues: r.values,
    values: shared.files.get(r.name) ?? [],
    sets: shared.sets.get(r.name) ?? [],
  };
}

/** Install's options for one release: its own timeout too. */
export function releaseOptions(o: InstallOptions, r: GraphRelease, shared: SharedValues): InstallOptions {
  return { ...chartOptions(o, r, shared), timeout: r.timeout ?? o.timeout, planOnly: false };
}
