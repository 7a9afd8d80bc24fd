// Vendored dependencies (issue 21): every dependency a chart lists must sit in its charts/ (an
// unpacked directory or a .tgz, found by the name in its own Chart.yaml, as helm finds it), at
// the version Chart.lock pins, else within the Chart.yaml range. Helm refuses only a missing
// name, and only for the top chart ("found in Chart.yaml, but missing in charts/ directory"); a
// version outside the range it renders without the dependency's alias and condition, and a
// subchart's missing dependency it leaves out without a word. The cure for each, `helm dependency
// build`, needs the network, which an airgap has not: so all of them are refused when the chart is
// read (exit 3), before any helm call. One is not the customer's to bear (issue 36): a version
// within the range but other than the lock's pin renders as helm means it to, so only the
// vendor's CI (`check-chart`, the image build: `strictPins`) refuses it; every other command names
// it as a warning and goes on. `condition` and `tags` do not matter: helm requires every listed
// dependency, enabled or not. Pure: chart.ts reads the files.
import { InvalidInputError } from '../common/errors.js';
import type { LoadedChart } from './chart-subcharts.js';
import { satisfiesRange } from '../common/semver-range.js';

export interface DependencyCheck {
  /** The chart that lists it: its directory, or `chart.tgz:charts/sub` inside an archive. */
  chart: string;
  name: string;
  alias?: string;
  /** Its version or range as listed; '' when it gives none (helm then needs only the name). */
  range: string;
  /** Where it is listed: Chart.yaml, or an old chart's requirements.yaml. */
  listedIn: 'Chart.yaml' | 'requirements.yaml';
  /** What the lock pins for it, when the chart has a lock that names it. */
  pinned?: string;
  pinnedIn?: 'Chart.lock' | 'requirements.lock';
  /** The versions of the charts of that name in charts/ (empty: missing). */
  vendored: string[];
  /** True when one of them is what the lock pins and the range allows. */
  ok: boolean;
  /** A range node's semver cannot read (Masterminds' `!=`): only the pin and the name were checked. */
  rangeUnread?: boolean;
  /** Not ok only because no vendored version is the lock's pin: one is within the range (helm renders it fully). */
  offPin?: true;
}

/** Every dependency of the chart and of its subcharts (at any depth), parent first. */
export function checkDependencies(tree: LoadedChart): DependencyCheck[] {
  const chart = chartLocation(tree.chartFile);
  const { list, file, listedIn } = listedDependencies(tree);
  const { pins, pinnedIn } = lockedDependencies(tree);
  const present = tree.subcharts.map((s) => ({ name: s.meta.name, version: String(s.meta.version ?? '') }));
  const own = list.map((entry, i) => {
    if (!isMap(entry) || typeof entry.name !== 'string' || entry.name === '') {
      throw new InvalidInputError(`${file}: dependency ${i + 1} has no name`, {
        file,
        key: `dependencies[${i}]`,
        hint: 'Give every dependency a name, as `helm dependency build` requires.',
      });
    }
    const name = entry.name;
    const pin = pins[i]?.name === name ? pins[i] : pins.find((p) => p.name === name);
    const range = entry.version === undefined || entry.version === null ? '' : String(entry.version);
    const vendored = present.filter((p) => p.name === name).map((p) => p.version);
    const alias = typeof entry.alias === 'string' && entry.alias !== '' ? entry.alias : undefined;
    const pinned = pin?.version === undefined ? {} : { pinned: pin.version, pinnedIn };
    return { chart, name, alias, range, listedIn, ...pinned, vendored, ...judge(vendored, range, pin?.version) };
  });
  return [...own, ...tree.subcharts.flatMap(checkDependencies)];
}

/** Whether a vendored version is the pinned one and within the range; a range not read is not held against it. */
function judge(
  vendored: string[],
  range: string,
  pinned: string | undefined,
): Pick<DependencyCheck, 'ok' | 'rangeUnread' | 'offPin'> {
  let rangeUnread = false;
  const fits = (version: string) => {
    const inRange = range === '' ? true : satisfiesRange(version, range);
    if (inRange === undefined) rangeUnread = true;
    return inRange !== false && (pinned === undefined || satisfiesRange(version, pinned) !== false);
  };
  const ok = vendored.some(fits);
  // Within the range (or a range not read), only the pin missed: bookkeeping, not a broken render.
  const offPin =
    !ok && pinned !== undefined && vendored.some((v) => (range === '' ? true : satisfiesRange(v, range)) !== false);
  return { ok, ...(rangeUnread ? { rangeUnread } : {}), ...(offPin ? { offPin: true as const } : {}) };
}

/** The chart's dependencies: requirements.yaml's when it has them (helm reads it over Chart.yaml). */
function listedDependencies(tree: LoadedChart): {
  list: unknown[];
  file: string;
  listedIn: DependencyCheck['listedIn'];
} {
  const requirements = tree.dependencyFiles?.['requirements.yaml'];
  if (requirements && Array.isArray(requirements.data.dependencies)) {
    return { list: requirements.data.dependencies, file: requirements.file, listedIn: 'requirements.yaml' };
  }
  return {
    list: Array.isArray(tree.meta.dependencies) ? tree.meta.dependencies : [],
    file: tree.chartFile,
    listedIn: 'Chart.yaml',
  };
}

/** The lock's entries (requirements.lock wins, as helm reads it after Chart.lock). */
function lockedDependencies(tree: LoadedChart): {
  pins: { name: unknown; version?: string }[];
  pinnedIn: DependencyCheck['pinnedIn'];
} {
  const files = tree.dependencyFiles ?? {};
  const pinnedIn = files['requirements.lock'] ? 'requirements.lock' : 'Chart.lock';
  const list = files[pinnedIn]?.data.dependencies;
  const pins = (Array.isArray(list) ? list : []).filter(isMap).map((d) => ({
    name: d.name,
    version: d.version === undefined || d.version === null ? undefined : String(d.version),
  }));
  return { pins, pinnedIn };
}

/**
 * The chart's dependencies, each found in its charts/; otherwise exit 3 naming every one that is
 * not, with what charts/ holds and how to vendor it. One vendored off its lock's pin but within
 * the range is returned (`offPin`): `refuseOffPin` is the vendor's CI's check.
 */
export function requireVendoredDependencies(tree: LoadedChart): DependencyCheck[] {
  const checks = checkDependencies(tree);
  refuse(
    checks.filter((c) => !c.ok && !c.offPin),
    tree,
  );
  return checks;
}

/** `check-chart` and the image build: a dependency off its lock's pin is exit 3 too. */
export function refuseOffPin(checks: DependencyCheck[], tree?: LoadedChart): void {
  refuse(
    checks.filter((c) => c.offPin),
    tree,
  );
}

function refuse(bad: DependencyCheck[], tree: LoadedChart | undefined): void {
  const first = bad[0];
  if (!first) return;
  throw new InvalidInputError(bad.map((c) => dependencyProblem(c, tree)).join('\n'), {
    file: first.chart,
    hint: vendorHint(first.chart),
  });
}

/** The warning every other command gives for one off its pin: both versions, and why it goes on. */
export function offPinWarning(c: DependencyCheck): string {
  const within =
    c.range === '' ? `${c.listedIn} gives it no range` : `it is within the range ${c.range} ${c.listedIn} asks for`;
  return `${dependencyProblem(c)}: installed as it is (${within}); the vendor's CI (helm-installer check-chart) refuses this chart until its charts/ matches the lock`;
}

/** One line: the chart, the dependency, the version wanted and what charts/ holds instead. */
function dependencyProblem(c: DependencyCheck, root?: LoadedChart): string {
  const label = c.alias ? `${c.name} (alias ${c.alias})` : c.name;
  const wanted =
    c.pinned !== undefined ? `${c.pinned} (pinned in ${c.pinnedIn})` : c.range !== '' ? c.range : '(any version)';
  if (c.vendored.length === 0) {
    return `chart ${c.chart}: dependency ${label} ${wanted} is not vendored: charts/ holds ${holdings(c.chart, root)}`;
  }
  const versions = c.vendored.join(', ');
  const pinMissed = c.pinned !== undefined && c.vendored.every((v) => satisfiesRange(v, c.pinned!) === false);
  const why = pinMissed ? `${c.pinnedIn} pins ${c.pinned}` : `${c.listedIn} asks for ${c.range}`;
  return `chart ${c.chart}: dependency ${label} is ${versions} in charts/, but ${why}`;
}

/** One line of `check-chart`'s report: the dependency, what charts/ holds, against what. */
export function describeDependency(c: DependencyCheck): string {
  const label = c.alias ? `${c.name} (alias ${c.alias})` : c.name;
  const against = [
    ...(c.pinned !== undefined ? [`${c.pinnedIn} pins ${c.pinned}`] : []),
    c.range === ''
      ? `${c.listedIn} gives no version`
      : `${c.listedIn} asks for ${c.range}${c.rangeUnread ? ' (a range only helm reads: not checked)' : ''}`,
  ];
  return `${c.chart}: ${label} ${c.vendored.join(', ')} in charts/ (${against.join('; ')})`;
}

/** What charts/ of the named chart holds, for the message: `cache 0.3.2, redis 1.0.0` or `no chart`. */
function holdings(chart: string, root: LoadedChart | undefined): string {
  const tree = root && findChart(root, chart);
  const names = (tree?.subcharts ?? []).map((s) => `${String(s.meta.name)} ${String(s.meta.version ?? '')}`.trim());
  return names.length === 0 ? 'no chart' : names.join(', ');
}

function findChart(tree: LoadedChart, chart: string): LoadedChart | undefined {
  if (chartLocation(tree.chartFile) === chart) return tree;
  for (const sub of tree.subcharts) {
    const found = findChart(sub, chart);
    if (found) return found;
  }
  return undefined;
}

/** Kept short: the summary clips a line at 300 characters, and the chart's path is in it. */
function vendorHint(chart: string): string {
  // A chart read from an archive is `x.tgz` (its root) or `x.tgz:charts/sub` (inside it).
  const archive = chart.includes(':') || chart.endsWith('.tgz') ? chart.split(':')[0] : undefined;
  const build = archive
    ? `rebuild ${archive} (\`helm dependency build\` on its chart, then \`helm package\`)`
    : `run \`helm dependency build ${chart}\``;
  return `Where the network is reachable, ${build}, then rebuild the installer image: an airgapped install cannot download a dependency.`;
}

/** A chart's directory (or archive path) from the Chart.yaml it was read from. */
function chartLocation(chartFile: string): string {
  return chartFile.replace(/[/:]Chart\.yaml$/, '');
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
