// Stage "chart": find the bundled chart and read its metadata. A chart archive comes from the
// vendor's image, but the same code reads any --chart path, so archives are checked before helm
// sees them: no absolute paths, no "..", no links leaving the chart, no devices, no absurd sizes.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, posix, relative, resolve, sep } from 'node:path';
import * as tar from 'tar';
import { parseDocument } from 'yaml';
import { InvalidInputError } from './errors.js';

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
  /** The chart's own values.yaml as parsed data (used for image hints). */
  defaultValues: Record<string, unknown>;
}

const MAX_ENTRIES = 20_000;
const MAX_TOTAL_BYTES = 200 * 1024 * 1024;
const MAX_FILE_BYTES = 20 * 1024 * 1024;

export async function loadChart(input: ChartInput): Promise<ChartInfo> {
  const path = input.chart ? resolve(input.chart) : findBundledChart(input.appDir);
  if (!existsSync(path)) {
    throw new InvalidInputError(`chart not found: ${path}`, {
      file: path,
      hint: 'Pass --chart (HELM_INSTALLER_CHART) with a chart directory or .tgz archive that exists.',
    });
  }
  return statSync(path).isDirectory() ? readChartDirectory(path) : readChartArchive(path);
}

/** The one chart under app/: a directory holding Chart.yaml, or a .tgz file. */
export function findBundledChart(appDir: string): string {
  const dir = resolve(appDir);
  if (!existsSync(dir)) {
    throw new InvalidInputError(`no chart given and the app directory ${dir} does not exist`, {
      file: dir,
      hint: 'Pass --chart (HELM_INSTALLER_CHART) or --app-dir (HELM_INSTALLER_APP_DIR).',
    });
  }
  const candidates = readdirSync(dir, { withFileTypes: true })
    .filter((e) => (e.isDirectory() && existsSync(join(dir, e.name, 'Chart.yaml'))) || (e.isFile() && e.name.endsWith('.tgz')))
    .map((e) => join(dir, e.name))
    .sort();
  if (candidates.length !== 1) {
    throw new InvalidInputError(
      candidates.length === 0 ? `no chart under ${dir}` : `more than one chart under ${dir}: ${candidates.join(', ')}`,
      { file: dir, hint: 'Keep exactly one chart (directory with Chart.yaml, or .tgz) in the app directory, or pass --chart.' },
    );
  }
  return candidates[0]!;
}

function readChartDirectory(dir: string): ChartInfo {
  const chartFile = join(dir, 'Chart.yaml');
  if (!existsSync(chartFile)) {
    throw new InvalidInputError(`${dir} is not a chart: it has no Chart.yaml`, {
      file: dir,
      hint: 'Point --chart at the directory that contains Chart.yaml.',
    });
  }
  checkDirectoryLinks(dir);
  const valuesFile = join(dir, 'values.yaml');
  return describeChart(dir, 'directory', readFileSync(chartFile, 'utf8'), chartFile, existsSync(valuesFile) ? readFileSync(valuesFile, 'utf8') : '', valuesFile);
}

/** Symlinks inside a chart directory must stay inside it (helm follows them). */
function checkDirectoryLinks(root: string): void {
  const realRoot = realpathSync(root);
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
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
        throw new InvalidInputError(`chart contains a special file: ${p}`, { file: p, hint: 'Remove it from the chart.' });
      }
    }
  };
  walk(root);
}

async function readChartArchive(file: string): Promise<ChartInfo> {
  const texts = new Map<string, string>();
  let entries = 0;
  let total = 0;
  const problems: string[] = [];
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        entries += 1;
        total += entry.size ?? 0;
        const raw = entry.header?.path ?? entry.path;
        const problem = archiveEntryProblem(raw, entry.type, entry.linkpath, entry.size ?? 0);
        if (problem) problems.push(problem);
        // Keep the top-level Chart.yaml and values.yaml (first path component is the chart name).
        const parts = posix.normalize(raw).split('/');
        if (parts.length === 2 && (parts[1] === 'Chart.yaml' || parts[1] === 'values.yaml') && entry.type === 'File') {
          const chunks: Buffer[] = [];
          entry.on('data', (c: Buffer) => chunks.push(c));
          entry.on('end', () => texts.set(parts[1]!, Buffer.concat(chunks).toString('utf8')));
        }
      },
    });
  } catch (err) {
    throw new InvalidInputError(`cannot read chart archive ${file}: ${(err as Error).message}`, {
      file,
      cause: err,
      hint: 'Rebuild the archive with `helm package`.',
    });
  }
  if (entries > MAX_ENTRIES) problems.push(`${entries} entries (limit ${MAX_ENTRIES})`);
  if (total > MAX_TOTAL_BYTES) problems.push(`${total} bytes unpacked (limit ${MAX_TOTAL_BYTES})`);
  if (problems.length > 0) {
    throw new InvalidInputError(`unsafe chart archive ${file}: ${problems.slice(0, 5).join('; ')}`, {
      file,
      hint: 'Rebuild the archive with `helm package` from a clean chart directory.',
    });
  }
  const chartYaml = texts.get('Chart.yaml');
  if (chartYaml === undefined) {
    throw new InvalidInputError(`chart archive ${file} has no <name>/Chart.yaml`, {
      file,
      hint: 'Package the chart with `helm package`.',
    });
  }
  return describeChart(file, 'archive', chartYaml, `${file}:Chart.yaml`, texts.get('values.yaml') ?? '', `${file}:values.yaml`);
}

/** Why one archive entry is unsafe, or undefined when it is fine. Pure, for unit tests. */
export function archiveEntryProblem(path: string, type: string, linkpath: string | undefined, size: number): string | undefined {
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path)) return `absolute path ${path}`;
  if (path.split(/[\\/]/).includes('..')) return `path with .. ${path}`;
  if (['CharacterDevice', 'BlockDevice', 'FIFO'].includes(type)) return `device or FIFO ${path}`;
  if (size > MAX_FILE_BYTES) return `file ${path} is ${size} bytes (limit ${MAX_FILE_BYTES})`;
  if (type === 'SymbolicLink' || type === 'Link') {
    if (!linkpath) return `link ${path} without a target`;
    if (isAbsolute(linkpath)) return `link ${path} points to absolute ${linkpath}`;
    // Symlink targets are relative to the link's folder; hard links to the archive root.
    const base = type === 'SymbolicLink' ? posix.dirname(path) : '.';
    const target = normalize(posix.join(base, linkpath));
    if (target.startsWith('..') || relative('.', target).startsWith('..')) return `link ${path} escapes the chart (-> ${linkpath})`;
  }
  return undefined;
}

function describeChart(
  path: string,
  format: ChartInfo['format'],
  chartYaml: string,
  chartFile: string,
  valuesYaml: string,
  valuesFile: string,
): ChartInfo {
  const meta = parseYamlMap(chartYaml, chartFile);
  const name = meta.name;
  const version = meta.version;
  if (typeof name !== 'string' || typeof version !== 'string') {
    throw new InvalidInputError(`${chartFile} must set string fields name and version`, {
      file: chartFile,
      key: typeof name !== 'string' ? 'name' : 'version',
      hint: 'Fix Chart.yaml.',
    });
  }
  return {
    path,
    format,
    name,
    version,
    appVersion: typeof meta.appVersion === 'string' ? meta.appVersion : undefined,
    defaultValues: parseYamlMap(valuesYaml, valuesFile),
  };
}

function parseYamlMap(text: string, file: string): Record<string, unknown> {
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false });
  const err = doc.errors[0];
  if (err) {
    throw new InvalidInputError(`${file}: ${err.message.split('\n')[0]}`, { file, line: err.linePos?.[0].line, hint: 'Fix the YAML syntax.' });
  }
  const data = doc.toJS() as unknown;
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidInputError(`${file} must be a YAML map at the top level`, { file, line: 1, hint: 'Fix the file.' });
  }
  return data as Record<string, unknown>;
}
