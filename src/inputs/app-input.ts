// The app's input, resolved once per run by the command that runs (src/cli/commands/): one chart, an
// app of one release, or a release plan file with its releases and the customer's values shared
// out by release name. This is the only place that looks for a plan file; every command and step
// below works on what it returns, so none asks again and none is entered twice. It is also the
// only place that tells one chart from a release plan: every command runs the app's list of
// releases (one chart is a list of one), and what only a release plan file has (its app name,
// inventory, app revisions, app rollback, prune, last-run ConfigMap) hangs off `scope`.
import { basename } from 'node:path';
import { InvalidInputError, UsageError } from '../common/errors.js';
import { defaultBaseValues, type CommonOptions } from '../options/config.js';
import { findPlanFile, readPlanFile, type PlannedRelease, type ReleasePlan } from './plan-file.js';
import { planGraph, type PlanGraph } from './plan-graph.js';
import type { SetArgument } from '../helm/helm-args.js';
import { expandValuesPath } from './values.js';

/** A release plan as read and checked (exit 3 before anything is touched). */
interface OpenedPlan {
  plan: ReleasePlan;
  shared: SharedValues;
}

/** `plan` undefined: one chart, named by the command's own options (--chart, --release, the app directory). */
export type AppInput = { plan?: undefined } | OpenedPlan;

type InputOptions = Pick<CommonOptions, 'appDir'> &
  Partial<Pick<CommonOptions, 'chart' | 'release' | 'releasesFile' | 'baseValues' | 'values' | 'sets'>>;

/** `progress`: the run's, whose action a failure summary names. */
export function resolveInput(o: InputOptions, progress?: { action: string }): AppInput {
  const file = findPlanFile({ releasesFile: o.releasesFile, chart: o.chart, appDir: o.appDir });
  if (!file) return {};
  refuseChartOptions(o);
  if (progress) progress.action = 'reading the release plan';
  const plan = readPlanFile(file, o.appDir);
  return {
    plan,
    shared: shareValues({ values: o.values ?? [], sets: o.sets ?? [] }, [...new Set(plan.releases.map((r) => r.name))]),
  };
}

/** What only a release plan file gives an app: its file and its name (which names the inventory, the app revisions and the release labels). */
export interface AppScope {
  file: string;
  app: string;
}

/** Undefined for one chart: it has no inventory, app revision, app rollback, prune or last-run ConfigMap. */
export function appScope(input: AppInput): AppScope | undefined {
  return input.plan && { file: input.plan.file, app: input.plan.app };
}

/** The chart of each release the app lists; one chart's is --chart (undefined: the one under the app directory). */
export function appChartPaths(o: { chart?: string }, input: AppInput): (string | undefined)[] {
  return input.plan ? input.plan.releases.map((r) => r.chart) : [o.chart];
}

/** One release of the app: its command options, and its name in the release plan (none for one chart). */
export interface AppRelease<O> {
  options: O;
  name?: string;
}

/**
 * Every release the app lists, switched on or not, each with the command's options for it: one
 * chart is a list of one. `namespace`: where a release without its own goes, for the plan's
 * checks (cycles, unknown dependencies, duplicates: exit 3).
 */
export function appReleases<O extends CommonOptions>(o: O, input: AppInput, namespace: string): AppRelease<O>[] {
  if (!input.plan) return [{ options: o }];
  planGraph(input.plan, namespace, {});
  return input.plan.releases.map((r) => ({ options: chartOptions(o, r, input.shared), name: r.name }));
}

/** One release the app installs, as the scheduler runs it. */
export interface ScheduledRelease<O> {
  options: O;
  /**
   * `namespace/name` of a release plan's release: its log key, what its dependents name. None for
   * one chart: the run is the release's own (its name is --release, else the chart's, once read).
   */
  key?: string;
  /** --release for one chart (undefined: the chart's name). */
  name?: string;
  namespace: string;
  /** Keys of the releases it waits for. */
  deps: string[];
  /** The release's own --timeout, when the plan gives one. */
  timeout?: string;
}

export interface AppGraph<O> {
  /** The releases switched on, each after its dependencies. */
  releases: ScheduledRelease<O>[];
  /** A release plan's file and graph; undefined for one chart. */
  scope?: { file: string; graph: PlanGraph };
}

/** The releases the app installs in the run's `namespace`, their `enabled` read from `env`; one chart is a list of one, its options as given. */
export function appGraph<O extends CommonOptions>(
  o: O,
  input: AppInput,
  namespace: string,
  env: NodeJS.ProcessEnv,
): AppGraph<O> {
  if (!input.plan) return { releases: [{ options: o, name: o.release, namespace, deps: [] }] };
  const graph = planGraph(input.plan, namespace, env);
  const releases = graph.enabled.map((r) => ({
    options: chartOptions(o, r, input.shared),
    key: r.key,
    name: r.name,
    namespace: r.namespace,
    deps: r.deps,
    timeout: r.timeout,
  }));
  return { releases, scope: { file: input.plan.file, graph } };
}

/** Any command's options for one release of the plan: its chart, name, namespace and values. */
function chartOptions<O extends CommonOptions>(
  o: O,
  r: Pick<PlannedRelease, 'name' | 'chart' | 'values' | 'namespace'>,
  shared: SharedValues,
): O {
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

/** For a command that takes one chart (values, render): an app whose release plan names several is refused. */
export function oneChart(input: AppInput): void {
  if (!input.plan) return;
  throw new UsageError(
    `this command takes one chart, and the app directory has a release plan (${input.plan.file}) naming several`,
    {
      hint: "Name one release's chart with --chart (and its values with --base-values and --values).",
    },
  );
}

/** The options that name one chart, given beside a release plan. */
function refuseChartOptions(o: InputOptions): void {
  const hint =
    'A release plan names each release, its chart and namespace: remove the option, or drop --releases-file to use one chart.';
  if (o.chart !== undefined)
    throw new UsageError('--chart (HELM_INSTALLER_CHART) and a release plan (--releases-file) were both given', {
      hint,
    });
  if (o.release !== undefined)
    throw new UsageError(
      "--release (HELM_INSTALLER_RELEASE) names one chart's release; the release plan names its own",
      { hint },
    );
  // Only the default (<app-dir>/values) may be there: the plan gives each release its own vendor
  // values, and a --base-values that was silently dropped would be a trap.
  if (o.baseValues && o.baseValues.join('\0') !== defaultBaseValues(o.appDir).join('\0')) {
    throw new UsageError(
      "--base-values (HELM_INSTALLER_BASE_VALUES) was given, but a release plan names each release's vendor values (its `values` list)",
      { hint },
    );
  }
}

// The customer's values are shared out by name, so one mounted ConfigMap can hold every release's
// values: the file `<release>.yaml` (or .yml) goes to that release, and `--set <release>:key=value`
// too. A file or --set that names no release of the plan is refused (exit 3): customer values
// silently dropped would be a trap.
export interface SharedValues {
  files: Map<string, string[]>;
  sets: Map<string, SetArgument[]>;
}

const HINT =
  'With a release plan, name each customer values file after its release (<release>.yaml) and prefix each --set with its release (--set <release>:key=value).';

/** Pure but for listing the --values directories. `names`: every release name of the plan. */
export function shareValues(o: Pick<CommonOptions, 'values' | 'sets'>, names: string[]): SharedValues {
  const files = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const file of o.values.flatMap(expandValuesPath)) {
    const name = basename(file).replace(/\.ya?ml$/, '');
    const list = files.get(name);
    if (!list)
      throw new InvalidInputError(
        `customer values file ${file} names no release of the plan (releases: ${names.join(', ')})`,
        { file, hint: HINT },
      );
    list.push(file);
  }
  const sets = new Map<string, SetArgument[]>(names.map((n) => [n, []]));
  for (const s of o.sets) {
    const m = /^([a-z0-9][a-z0-9.-]*):(.*)$/s.exec(s.expression);
    const list = m && sets.get(m[1]!);
    if (!m || !list)
      throw new InvalidInputError(
        `--${s.kind} ${s.expression.split('=')[0]}=... names no release of the plan (releases: ${names.join(', ')})`,
        { key: `--${s.kind}`, hint: HINT },
      );
    list.push({ kind: s.kind, expression: m[2]! });
  }
  return { files, sets };
}
