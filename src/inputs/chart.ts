// Stage "chart": find the bundled chart and read its metadata. A chart archive comes from the
// vendor's image, but the same code reads any --chart path, so it is checked before helm sees it:
// an archive by chart-archive.ts (no absolute paths, no "..", no links leaving the chart, no
// devices, no absurd sizes), a directory here (its links and sizes).
import { createReadStream, existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { parseDocument } from 'yaml';
import { InvalidInputError } from '../common/errors.js';
import { formatBytes, kindOf, readInputFile, requireRegularFile } from '../common/read-input.js';
import { checkYamlBounds, MAX_ALIAS_COUNT } from './values.js';
import type { AnnotatedImage } from './chart-images.js';
import {
  annotatedImagesOfTree,
  coalescedDefaults,
  DEPENDENCY_FILES,
  type DependencyFiles,
  type LoadedChart,
} from './chart-subcharts.js';
import { refuseOffPin, requireVendoredDependencies, type DependencyCheck } from './chart-dependencies.js';
import {
  MAX_ARCHIVE_BYTES,
  MAX_ENTRIES,
  MAX_FILE_BYTES,
  MAX_TOTAL_BYTES,
  scanArchive,
  type ArchiveScan,
} from './chart-archive.js';
import { Readable } from 'node:stream';

export interface ChartInput {
  /** Explicit --chart; otherwise the one chart under appDir. */
  chart?: string;
  appDir: string;
}

export interface ChartInfo {
  path: string;
  format: 'directory' | 'archive';
  name: string;
  version: string;
  appVersion?: string;
  /** Chart.yaml's `kubeVersion`: the Kubernetes versions helm installs it on (the preflight checks it). */
  kubeVersion?: string;
  /**
   * Its defaults as helm coalesces them: values.yaml with each subchart's under its key (image
   * hints). Read on first use (then kept): a bad values.yaml throws here, with its file named.
   */
  readonly defaultValues: Record<string, unknown>;
  /** Images its Chart.yaml and its subcharts' (unpacked or archived) declare in `helm.sh/images`. */
  annotatedImages: AnnotatedImage[];
  /** Every dependency of the chart and its subcharts, each found vendored in its charts/ (checked on load). */
  dependencies: DependencyCheck[];
}

const CHART_HINT = 'Pass --chart (HELM_INSTALLER_CHART) with a chart directory or a .tgz made by `helm package`.';

/**
 * The chart's metadata, limits and links checked. Its values.yaml files (the bulk of the YAML to
 * parse) are read and checked here too, unless `deferValues`: then on the first read of
 * `defaultValues`. `install` defers them past its no-op check, which needs the chart's name,
 * version and bytes but not its defaults: parsing them cost an unchanged redeploy a tenth of its time.
 * `strictPins` (the vendor's CI: check-chart, the image build): a dependency vendored off its
 * lock's pin is refused too; elsewhere it is only in `dependencies`, marked `offPin`.
 */
export async function loadChart(
  input: ChartInput,
  options: { deferValues?: boolean; strictPins?: boolean } = {},
): Promise<ChartInfo> {
  const chart = await loadChartLazily(input);
  if (options.strictPins) refuseOffPin(chart.dependencies);
  if (!options.deferValues) void chart.defaultValues;
  return chart;
}

async function loadChartLazily(input: ChartInput): Promise<ChartInfo> {
  const path = input.chart ? resolve(input.chart) : findBundledChart(input.appDir);
  if (!existsSync(path)) {
    throw new InvalidInputError(`chart not found: ${path}`, {
      file: path,
      hint: 'Pass --chart (HELM_INSTALLER_CHART) with a chart directory or .tgz archive that exists.',
    });
  }
  const st = statSync(path);
  if (st.isDirectory()) return readChartDirectory(path);
  if (!st.isFile())
    throw new InvalidInputError(`the chart ${path} is ${kindOf(st)}, not a directory or a .tgz file`, {
      file: path,
      hint: CHART_HINT,
    });
  return readChartArchive(path);
}

/** The one chart under app/: a directory holding Chart.yaml, or a .tgz file. */
function findBundledChart(appDir: string): string {
  const dir = resolve(appDir);
  if (!existsSync(dir)) {
    throw new InvalidInputError(`no chart given and the app directory ${dir} does not exist`, {
      file: dir,
      hint: 'Pass --chart (HELM_INSTALLER_CHART) or --app-dir (HELM_INSTALLER_APP_DIR).',
    });
  }
  const candidates = readdirSync(dir, { withFileTypes: true })
    .filter(
      (e) =>
        (e.isDirectory() && existsSync(join(dir, e.name, 'Chart.yaml'))) || (e.isFile() && e.name.endsWith('.tgz')),
    )
    .map((e) => join(dir, e.name))
    .sort();
  if (candidates.length !== 1) {
    throw new InvalidInputError(
      candidates.length === 0 ? `no chart under ${dir}` : `more than one chart under ${dir}: ${candidates.join(', ')}`,
      {
        file: dir,
        hint: 'Keep exactly one chart (directory with Chart.yaml, or .tgz) in the app directory, or pass --chart.',
      },
    );
  }
  return candidates[0]!;
}

async function readChartDirectory(dir: string): Promise<ChartInfo> {
  const chartFile = join(dir, 'Chart.yaml');
  if (!existsSync(chartFile)) {
    throw new InvalidInputError(`${dir} is not a chart: it has no Chart.yaml`, {
      file: dir,
      hint: 'Point --chart at the directory that contains Chart.yaml.',
    });
  }
  checkDirectoryLinks(dir);
  return describeChart(dir, 'directory', await loadDirectoryTree(dir, 0));
}

const readChartFile = (file: string) =>
  readInputFile(file, { what: 'chart file', maxBytes: MAX_FILE_BYTES, hint: 'Fix the chart.' });

/** A chart directory with its subcharts: unpacked ones under charts/ and archived ones (charts/*.tgz). */
async function loadDirectoryTree(dir: string, depth: number): Promise<LoadedChart> {
  const chartFile = join(dir, 'Chart.yaml');
  const valuesFile = join(dir, 'values.yaml');
  const charts = join(dir, 'charts');
  const subcharts: LoadedChart[] = [];
  if (existsSync(charts) && statSync(charts).isDirectory()) {
    const entries = readdirSync(charts, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name));
    for (const e of entries) {
      const path = join(charts, e.name);
      if (ignoredByHelm(e.name)) continue;
      if (e.isDirectory() && existsSync(join(path, 'Chart.yaml')))
        subcharts.push(await loadDirectoryTree(path, depth + 1));
      else if (e.isFile() && e.name.endsWith('.tgz'))
        subcharts.push(await loadArchiveTree(() => createReadStream(path), path, depth + 1));
    }
  }
  const dependencyFiles = readDependencyFiles(
    dir,
    (file) => (existsSync(file) ? readChartFile(file) : undefined),
    join,
  );
  return withLazyValues(
    { chartFile, meta: parseYamlMap(readChartFile(chartFile), chartFile), subcharts, dependencyFiles },
    () => (existsSync(valuesFile) ? parseYamlMap(readChartFile(valuesFile), valuesFile) : {}),
  );
}

/** Helm's loader skips what charts/ holds under a name starting with `_` or `.`: not a subchart. */
const ignoredByHelm = (name: string) => name.startsWith('_') || name.startsWith('.');

/** Chart.lock and the old requirements files of one chart, those it has, parsed. */
function readDependencyFiles(
  at: string,
  read: (file: string) => string | undefined,
  place: (at: string, name: string) => string,
): DependencyFiles {
  const found: DependencyFiles = {};
  for (const name of DEPENDENCY_FILES) {
    const file = place(at, name);
    const text = read(file);
    if (text !== undefined) found[name] = { file, data: parseYamlMap(text, file) };
  }
  return found;
}

/** The tree with `values` read on first use and kept; a read that fails throws on every use. */
function withLazyValues(tree: Omit<LoadedChart, 'values'>, read: () => Record<string, unknown>): LoadedChart {
  let values: Record<string, unknown> | undefined;
  return Object.defineProperty(tree, 'values', { enumerable: true, get: () => (values ??= read()) }) as LoadedChart;
}

/**
 * A chart archive with its subcharts, unpacked (charts/<dir>/) or archived again (charts/*.tgz,
 * read from memory with the same limits). Archives nest only as deep as charts do.
 */
async function loadArchiveTree(open: () => Readable, label: string, depth: number): Promise<LoadedChart> {
  if (depth > MAX_CHART_DEPTH) {
    throw new InvalidInputError(`chart ${label} nests subcharts more than ${MAX_CHART_DEPTH} levels deep`, {
      file: label,
      hint: 'Fix the chart.',
    });
  }
  return archivedChart((await scanChartArchive(open, label)).files, label, '', depth);
}

/** The archive's kept files, or the error naming why it cannot be a chart: not gzip, unsafe, no Chart.yaml. */
async function scanChartArchive(open: () => Readable, label: string): Promise<ArchiveScan> {
  let scan: ArchiveScan;
  try {
    scan = await scanArchive(open);
  } catch (err) {
    const message = (err as Error).message;
    const what = /header check|incorrect header|unknown compression/i.test(message)
      ? 'it is not a gzip archive'
      : message;
    throw new InvalidInputError(`cannot read chart archive ${label}: ${what}`, {
      file: label,
      cause: err,
      hint: 'Rebuild the archive with `helm package`.',
    });
  }
  if (scan.problems.length > 0) {
    throw new InvalidInputError(`unsafe chart archive ${label}: ${scan.problems.slice(0, 5).join('; ')}`, {
      file: label,
      hint: 'Rebuild the archive with `helm package` from a clean chart directory.',
    });
  }
  if (!scan.files.has('Chart.yaml')) {
    throw new InvalidInputError(`chart archive ${label} has no <name>/Chart.yaml`, {
      file: label,
      hint: 'Package the chart with `helm package`.',
    });
  }
  return scan;
}

/**
 * The chart at `prefix` in an archive's files, its subcharts first: unpacked ones from the same
 * files, archived ones read again from memory one level deeper.
 */
async function archivedChart(
  files: Map<string, Buffer>,
  label: string,
  prefix: string,
  depth: number,
): Promise<LoadedChart> {
  const subcharts: LoadedChart[] = [];
  const names = new Set<string>();
  for (const path of files.keys()) {
    const m = path.startsWith(`${prefix}charts/`)
      ? /^([^/]+)(\/Chart\.yaml)?$/.exec(path.slice(prefix.length + 'charts/'.length))
      : null;
    if (m && (m[2] || m[1]!.endsWith('.tgz')) && !ignoredByHelm(m[1]!)) names.add(m[1]!);
  }
  for (const name of [...names].sort()) {
    const inner = `${prefix}charts/${name}`;
    subcharts.push(
      name.endsWith('.tgz') && !files.has(`${inner}/Chart.yaml`)
        ? await loadArchiveTree(() => Readable.from([files.get(inner)!]), `${label}:${inner}`, depth + 1)
        : await archivedChart(files, label, `${inner}/`, depth + 1),
    );
  }
  const text = (name: string) => files.get(`${prefix}${name}`)?.toString('utf8');
  const chartFile = `${label}:${prefix}Chart.yaml`;
  const valuesText = text('values.yaml');
  const dependencyFiles = readDependencyFiles(
    `${label}:${prefix}`,
    (file) => text(file.slice(`${label}:${prefix}`.length)),
    (at, name) => `${at}${name}`,
  );
  return withLazyValues(
    { chartFile, meta: parseYamlMap(text('Chart.yaml') ?? '', chartFile), subcharts, dependencyFiles },
    () => (valuesText === undefined ? {} : parseYamlMap(valuesText, `${label}:${prefix}values.yaml`)),
  );
}

/** Symlinks inside a chart directory must stay inside it (helm follows them). */
function checkDirectoryLinks(root: string): void {
  const realRoot = realpathSync(root);
  let entries = 0;
  let total = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      entries += 1;
      if (entries > MAX_ENTRIES) {
        throw new InvalidInputError(`the chart directory ${root} holds more than ${MAX_ENTRIES} entries`, {
          file: root,
          hint: 'Fix the chart.',
        });
      }
      if (e.isFile()) {
        const size = lstatSync(p).size;
        total += size;
        if (size > MAX_FILE_BYTES || total > MAX_TOTAL_BYTES) {
          throw new InvalidInputError(
            size > MAX_FILE_BYTES
              ? `chart file ${p} is ${formatBytes(size)} (helm's limit is ${formatBytes(MAX_FILE_BYTES)} per file)`
              : `the chart directory ${root} holds more than ${formatBytes(MAX_TOTAL_BYTES)} (helm's limit)`,
            { file: p, hint: 'Fix the chart.' },
          );
        }
      }
      if (e.isSymbolicLink()) {
        const target = resolve(dir, readlinkSync(p));
        const real = existsSync(target) ? realpathSync(target) : target;
        if (real !== realRoot && !real.startsWith(realRoot + sep)) {
          throw new InvalidInputError(`chart file ${p} links outside the chart (to ${readlinkSync(p)})`, {
            file: p,
            hint: 'Replace the link with the file itself.',
          });
        }
      } else if (e.isDirectory()) {
        walk(p);
      } else if (!e.isFile() && !lstatSync(p).isFile()) {
        throw new InvalidInputError(`chart contains a special file: ${p}`, {
          file: p,
          hint: 'Remove it from the chart.',
        });
      }
    }
  };
  walk(root);
}

async function readChartArchive(file: string): Promise<ChartInfo> {
  const st = requireRegularFile(file, { what: 'chart archive', hint: CHART_HINT });
  if (st.size > MAX_ARCHIVE_BYTES) {
    throw new InvalidInputError(
      `chart archive ${file} is ${formatBytes(st.size)}, over the limit of ${formatBytes(MAX_ARCHIVE_BYTES)}`,
      { file, hint: CHART_HINT },
    );
  }
  return describeChart(file, 'archive', await loadArchiveTree(() => createReadStream(file), file, 0));
}

/** Subcharts of subcharts: helm has no limit, a chart deeper than this is not a real one. */
const MAX_CHART_DEPTH = 10;

function describeChart(path: string, format: ChartInfo['format'], tree: LoadedChart): ChartInfo {
  const { meta, chartFile } = tree;
  const name = meta.name;
  const version = meta.version;
  if (typeof name !== 'string' || typeof version !== 'string') {
    throw new InvalidInputError(`${chartFile} must set string fields name and version`, {
      file: chartFile,
      key: typeof name !== 'string' ? 'name' : 'version',
      hint: 'Fix Chart.yaml.',
    });
  }
  let defaults: Record<string, unknown> | undefined;
  return {
    path,
    format,
    name,
    version,
    appVersion: typeof meta.appVersion === 'string' ? meta.appVersion : undefined,
    kubeVersion:
      typeof meta.kubeVersion === 'string' && meta.kubeVersion.trim() !== '' ? meta.kubeVersion.trim() : undefined,
    get defaultValues() {
      return (defaults ??= coalescedDefaults(tree));
    },
    annotatedImages: annotatedImagesOfTree(tree),
    // Before any helm call: a dependency missing from charts/ would otherwise be helm's own error
    // (exit 4) or, with a dependency update, a fetch from a repository an airgap cannot reach.
    dependencies: requireVendoredDependencies(tree),
  };
}

function parseYamlMap(text: string, file: string): Record<string, unknown> {
  checkYamlBounds(text, file);
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false });
  const err = doc.errors[0];
  if (err) {
    throw new InvalidInputError(`${file}: ${err.message.split('\n')[0]}`, {
      file,
      line: err.linePos?.[0].line,
      hint: 'Fix the YAML syntax.',
    });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  } catch (e) {
    throw new InvalidInputError(`${file}: cannot be read (${(e as Error).message.split('\n')[0]!.slice(0, 120)})`, {
      file,
      hint: 'Fix the chart (an alias bomb?).',
    });
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidInputError(`${file} must be a YAML map at the top level`, {
      file,
      line: 1,
      hint: 'Fix the file.',
    });
  }
  return data as Record<string, unknown>;
}
