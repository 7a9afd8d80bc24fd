// The release plan: an optional YAML file in the app directory (releases.yaml) that lists several
// charts to install as releases, in dependency order. Read and checked here, before anything
// touches the cluster: a malformed file, an unknown key, a chart outside the app directory is
// exit 3 naming the file and the line. The graph checks (cycles, unknown dependencies,
// duplicates) are plan-graph.ts's (beside it). Schema: src/releases/release-plan.schema.json.
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { parseNamespace, parseReleaseName, parseTimeout } from '../options/config.js';
import { InvalidInputError, OptionValueError } from '../common/errors.js';
import { MiB, readInputFile } from '../common/read-input.js';

const PLAN_FILE_NAME = 'releases.yaml';
const PLAN_API_VERSION = 'helm-installer/v1';
const PLAN_KIND = 'ReleasePlan';
/** More releases than this in one app is a mistake, and each is a helm process at run time. */
const MAX_RELEASES = 50;

/** `enabled`: a constant, or an env var the Job sets from a KOTS Config item. */
type EnabledCondition = boolean | { env: string; default: boolean };

export interface PlannedRelease {
  name: string;
  /** Absent: the run's namespace (--namespace, else the kubeconfig's). */
  namespace?: string;
  /** Absolute path of a chart directory or archive inside the app directory. */
  chart: string;
  /** Vendor base values for this release, absolute paths inside the app directory. */
  values: string[];
  /** As written: `name` or `namespace/name`; plan-graph.ts resolves them. */
  dependsOn: string[];
  enabled: EnabledCondition;
  timeout?: string;
  /** Line of the entry in the plan file, for messages. */
  line: number;
}

export interface ReleasePlan {
  file: string;
  /** Names the app: the label that marks the releases this installer owns, and its inventory. */
  app: string;
  releases: PlannedRelease[];
}

const HINT =
  'Fix the release plan (see README "Several charts", src/releases/README.md); its schema is src/releases/release-plan.schema.json.';
const RELEASE_KEYS = ['name', 'namespace', 'chart', 'values', 'dependsOn', 'enabled', 'timeout'];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The plan file to use: the one given, else <app-dir>/releases.yaml when no --chart is given. */
export function findPlanFile(o: { releasesFile?: string; chart?: string; appDir: string }): string | undefined {
  if (o.releasesFile) return resolve(o.releasesFile);
  const inApp = join(resolve(o.appDir), PLAN_FILE_NAME);
  return o.chart === undefined && existsSync(inApp) ? inApp : undefined;
}

export function readPlanFile(file: string, appDir: string): ReleasePlan {
  const text = readInputFile(file, { what: 'release plan', maxBytes: MiB, hint: HINT });
  return parsePlan(text, file, resolve(appDir));
}

/** Pure but for checking that each chart path exists. */
export function parsePlan(text: string, file: string, appDir: string): ReleasePlan {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const fail = (why: string, at?: Node | null | number): never => {
    const offset = typeof at === 'number' ? at : at?.range?.[0];
    const line = offset === undefined ? undefined : lines.linePos(offset).line;
    throw new InvalidInputError(`release plan ${file}${line ? ` line ${line}` : ''}: ${why}`, {
      file,
      line,
      hint: HINT,
    });
  };
  const syntax = doc.errors[0];
  if (syntax) fail(`not valid YAML: ${syntax.message.split('\n')[0]}`, syntax.pos[0]);
  const root = doc.contents;
  if (!isMap(root))
    return fail(`expected a map with apiVersion: ${PLAN_API_VERSION}, kind: ${PLAN_KIND}, app and releases`, root);
  const top = checkKeys(doc, [], ['apiVersion', 'kind', 'app', 'releases'], fail);
  if (top.apiVersion !== PLAN_API_VERSION)
    fail(`apiVersion must be ${PLAN_API_VERSION}`, nodeAt(doc, ['apiVersion']) ?? root);
  if (top.kind !== PLAN_KIND) fail(`kind must be ${PLAN_KIND}`, nodeAt(doc, ['kind']) ?? root);
  const app = nameField(doc, ['app'], 'app', fail);
  const list = doc.getIn(['releases'], true) as Node | undefined;
  if (!isSeq(list) || list.items.length === 0)
    return fail('"releases" is a list of at least one release', list ?? root);
  if (list.items.length > MAX_RELEASES) fail(`${list.items.length} releases; at most ${MAX_RELEASES}`, list);
  const releases = list.items.map((_, i) => parseRelease(doc, i, { file, appDir, lines }, fail));
  return { file, app, releases };
}

type Fail = (why: string, at?: Node | null | number) => never;

function parseRelease(
  doc: Document,
  i: number,
  ctx: { file: string; appDir: string; lines: LineCounter },
  fail: Fail,
): PlannedRelease {
  const at = ['releases', i];
  const node = nodeAt(doc, at);
  if (!isMap(node)) return fail('each release is a map with name and chart', node);
  const r = checkKeys(doc, at, RELEASE_KEYS, fail);
  const name = nameField(doc, [...at, 'name'], 'release name', fail, parseReleaseName);
  const namespace =
    r.namespace === undefined ? undefined : nameField(doc, [...at, 'namespace'], 'namespace', fail, parseNamespace);
  const chart = appPath(doc, [...at, 'chart'], ctx.appDir, fail, true);
  const values = stringList(doc, [...at, 'values'], fail).map((_, j) =>
    appPath(doc, [...at, 'values', j], ctx.appDir, fail, true),
  );
  const dependsOn = stringList(doc, [...at, 'dependsOn'], fail);
  const timeout =
    r.timeout === undefined ? undefined : nameField(doc, [...at, 'timeout'], 'timeout', fail, parseTimeout);
  return {
    name,
    namespace,
    chart,
    values,
    dependsOn,
    enabled: enabledField(doc, [...at, 'enabled'], fail),
    timeout,
    line: ctx.lines.linePos(node.range?.[0] ?? 0).line,
  };
}

function nodeAt(doc: Document, path: (string | number)[]): Node | undefined {
  return doc.getIn(path, true) as Node | undefined;
}

/** The map at `path` as plain values, refusing keys it does not know (a typo is not ignored). */
function checkKeys(doc: Document, path: (string | number)[], known: string[], fail: Fail): Record<string, unknown> {
  const map = nodeAt(doc, path);
  if (!isMap(map)) return fail('expected a map', map);
  for (const pair of map.items) {
    const key = (pair.key as { value?: unknown } | null)?.value;
    if (typeof key !== 'string' || !known.includes(key))
      fail(`unknown key ${JSON.stringify(key)} (known: ${known.join(', ')})`, pair.key as Node);
  }
  return map.toJSON() as Record<string, unknown>;
}

function nameField(
  doc: Document,
  path: (string | number)[],
  what: string,
  fail: Fail,
  parse: (raw: string) => string = parseReleaseName,
): string {
  const node = nodeAt(doc, path);
  const value = (node as { value?: unknown } | undefined)?.value;
  if (typeof value !== 'string')
    return fail(
      `"${String(path.at(-1))}" (the ${what}) is required and is a string`,
      node ?? nodeAt(doc, path.slice(0, -1)),
    );
  try {
    return parse(value);
  } catch (error) {
    if (error instanceof OptionValueError) return fail(`${what} ${JSON.stringify(value)}: ${error.message}`, node);
    throw error;
  }
}

function stringList(doc: Document, path: (string | number)[], fail: Fail): string[] {
  const node = nodeAt(doc, path);
  if (node === undefined) return [];
  if (!isSeq(node)) return fail(`"${String(path.at(-1))}" is a list of strings`, node);
  return node.items.map((item) => {
    const value = (item as { value?: unknown }).value;
    return typeof value === 'string' && value !== ''
      ? value
      : fail(`"${String(path.at(-1))}" holds strings only`, item as Node);
  });
}

/** A path inside the app directory (a vendor's plan never reaches outside its bundle). */
function appPath(doc: Document, path: (string | number)[], appDir: string, fail: Fail, mustExist: boolean): string {
  const node = nodeAt(doc, path);
  const value = (node as { value?: unknown } | undefined)?.value;
  if (typeof value !== 'string' || value === '')
    return fail(
      `"${String(path.at(-1))}" is required: a path inside the app directory`,
      node ?? nodeAt(doc, path.slice(0, -1)),
    );
  const full = resolve(appDir, value);
  const inside = relative(appDir, full);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside))
    fail(`${JSON.stringify(value)} is outside the app directory ${appDir}`, node);
  if (mustExist && !existsSync(full))
    fail(`${JSON.stringify(value)} does not exist under the app directory ${appDir}`, node);
  return full;
}

function enabledField(doc: Document, path: (string | number)[], fail: Fail): EnabledCondition {
  const node = nodeAt(doc, path);
  if (node === undefined) return true;
  const value = node.toJSON() as unknown;
  if (typeof value === 'boolean') return value;
  const form = '"enabled" is true, false or {env: VARIABLE, default: true|false}';
  if (!isMap(node)) return fail(form, node);
  const c = checkKeys(doc, path, ['env', 'default'], fail);
  if (typeof c.env !== 'string' || !ENV_NAME.test(c.env))
    return fail(`${form}: "env" names an environment variable`, node);
  if (c.default !== undefined && typeof c.default !== 'boolean')
    return fail(`${form}: "default" is true or false`, node);
  return { env: c.env, default: c.default ?? false };
}
