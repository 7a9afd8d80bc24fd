// Ignore rules for the drift check: fields that something other than the release owns (an HPA's
// /spec/replicas, annotations a webhook adds) and that must neither count as drift nor be taken
// back. Flux's HelmRelease `driftDetection.ignore` has the same shape: JSON pointer paths,
// optionally limited to a target.
//
// Two written forms:
// - the option / env value: rules separated by `;` or newlines, each `[TARGET:]PATH[,PATH...]`,
//   TARGET being `Kind`, `Kind/name` or `Kind/namespace/name` (`*` for any), e.g.
//   `/spec/replicas; Deployment/web:/spec/replicas,/metadata/annotations/example.com~1x`;
// - a YAML file, a list of `{paths: [...], target: {kind, name, namespace}}`, as Flux writes it.
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { UsageError } from '../common/errors.js';
import { parsePointer } from './json-pointer.js';

export interface IgnoreRule {
  /** JSON pointers, e.g. /spec/replicas; a rule covers everything under each. */
  paths: string[];
  /** Which objects the rule applies to; every object when absent. */
  target?: { kind?: string; name?: string; namespace?: string };
}

export interface RuleOrigin {
  option: string;
  env: string;
  file?: string;
}

/** The identity of an object, as rules select it. */
export interface ObjectRef {
  kind: string;
  name: string;
  namespace?: string;
}

const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const TEXT_FORM =
  'write [Kind[/name]:]/json/pointer[,/other/pointer], rules separated by ";", e.g. "Deployment/web:/spec/replicas"';
const FILE_FORM =
  'write a YAML list of rules, e.g. "- paths: [/spec/replicas]\\n  target: {kind: Deployment, name: web}"';

/** Parses the option/env form, or the YAML file form when origin.file is set. Throws UsageError (exit 2). */
export function parseIgnoreRules(text: string, origin: RuleOrigin): IgnoreRule[] {
  return origin.file === undefined ? parseTextRules(text, origin) : parseFileRules(text, origin);
}

/** The paths of every rule that applies to the object. */
export function ignoredPaths(rules: readonly IgnoreRule[], ref: ObjectRef): string[] {
  return rules.filter((r) => ruleApplies(r, ref)).flatMap((r) => r.paths);
}

export function ruleApplies(rule: IgnoreRule, ref: ObjectRef): boolean {
  const t = rule.target;
  if (!t) return true;
  const any = (v: string | undefined) => v === undefined || v === '*';
  // Kinds are matched without regard to case: `deployment/web` is what people type.
  return (
    (any(t.kind) || t.kind!.toLowerCase() === ref.kind.toLowerCase()) &&
    (any(t.name) || t.name === ref.name) &&
    (any(t.namespace) || t.namespace === (ref.namespace ?? ''))
  );
}

function parseTextRules(text: string, origin: RuleOrigin): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/[;\n]/)) {
    const rule = raw.trim();
    if (!rule) continue;
    const fail = (why: string): never => {
      throw new UsageError(`${describe(origin)}: invalid drift ignore rule ${JSON.stringify(rule)}: ${why}`, {
        hint: `In ${origin.option} (${origin.env}), ${TEXT_FORM}.`,
      });
    };
    const colon = rule.startsWith('/') ? -1 : rule.indexOf(':');
    if (!rule.startsWith('/') && colon < 0) fail('no path (a path starts with "/")');
    const target = colon < 0 ? undefined : parseTarget(rule.slice(0, colon).trim(), fail);
    const paths = (colon < 0 ? rule : rule.slice(colon + 1)).split(',').map((p) => p.trim());
    paths.forEach((p) => checkPath(p, fail));
    rules.push(target ? { paths, target } : { paths });
  }
  return rules;
}

function parseTarget(text: string, fail: (why: string) => never): IgnoreRule['target'] {
  const parts = text.split('/').map((p) => p.trim());
  if (parts.length > 3) fail(`target ${JSON.stringify(text)} has more than Kind/namespace/name`);
  const [kind, a, b] = parts;
  const target = parts.length === 3 ? { kind, namespace: a, name: b } : { kind, name: a };
  if (!kind || (kind !== '*' && !KIND.test(kind)))
    fail(`${JSON.stringify(kind ?? '')} is not a kind (e.g. Deployment, or * for any)`);
  for (const [what, v] of [
    ['name', target.name],
    ['namespace', (target as { namespace?: string }).namespace],
  ] as const) {
    if (v !== undefined && v !== '*' && !NAME.test(v))
      fail(`${JSON.stringify(v)} is not a ${what} (lowercase letters, digits, "-" and ".", or * for any)`);
  }
  return Object.fromEntries(Object.entries(target).filter(([, v]) => v !== undefined)) as IgnoreRule['target'];
}

/** A path names at least one field and uses only the escapes ~0 and ~1. */
function checkPath(path: string, fail: (why: string) => never): void {
  if (!path) fail('an empty path');
  if (!path.startsWith('/'))
    fail(`path ${JSON.stringify(path)} is not a JSON pointer (it starts with "/", e.g. /spec/replicas)`);
  if (path === '/') fail('path "/" names no field');
  if (/~(?![01])/.test(path)) fail(`path ${JSON.stringify(path)} has a "~" that is not ~0 ("~") or ~1 ("/")`);
  parsePointer(path);
}

function describe(origin: RuleOrigin): string {
  return `${origin.option} (${origin.env})`;
}

function parseFileRules(text: string, origin: RuleOrigin): IgnoreRule[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, version: '1.1', uniqueKeys: true, prettyErrors: false });
  const fail = (why: string, node?: Node | null, at?: number): never => {
    const offset = at ?? node?.range?.[0];
    const line = offset === undefined ? undefined : lines.linePos(offset).line;
    throw new UsageError(`${describe(origin)}: ${origin.file}${line ? ` line ${line}` : ''}: ${why}`, {
      file: origin.file,
      line,
      hint: `In the file given to ${origin.option} (${origin.env}), ${FILE_FORM}.`,
    });
  };
  const error = doc.errors[0];
  if (error) fail(`not valid YAML: ${error.message.split('\n')[0]}`, undefined, error.pos[0]);
  if (doc.contents === null || (doc.contents as { value?: unknown }).value === null) return [];
  if (!isSeq(doc.contents)) fail('the file is not a list of rules', doc.contents);
  return (doc.contents as { items: unknown[] }).items.map((item) => parseFileRule(item as Node, fail));
}

function parseFileRule(item: Node, fail: (why: string, node?: Node | null) => never): IgnoreRule {
  if (!isMap(item)) fail('a rule is a map with "paths" and an optional "target"', item);
  const map = item as import('yaml').YAMLMap<Node, Node>;
  const rule: IgnoreRule = { paths: [] };
  for (const pair of map.items) {
    const key = (pair.key as { value?: unknown } | null)?.value;
    if (key === 'paths') rule.paths = filePaths(pair.value, fail, item);
    else if (key === 'target') rule.target = fileTarget(pair.value, fail, pair.key);
    else fail(`unknown key ${JSON.stringify(key)} in a rule (it has "paths" and "target")`, pair.key);
  }
  if (rule.paths.length === 0) fail('a rule needs "paths", a list of JSON pointers', item);
  return rule;
}

function filePaths(node: Node | null, fail: (why: string, node?: Node | null) => never, rule: Node): string[] {
  if (!isSeq(node)) return fail('"paths" is a list of JSON pointers, e.g. [/spec/replicas]', node ?? rule);
  return node.items.map((p) => {
    const value = (p as { value?: unknown }).value;
    if (typeof value !== 'string') return fail('each path is a string JSON pointer', p as Node);
    checkPath(value, (why) => fail(why, p as Node));
    return value;
  });
}

function fileTarget(
  node: Node | null,
  fail: (why: string, node?: Node | null) => never,
  keyNode: unknown,
): IgnoreRule['target'] {
  if (!isMap(node)) return fail('"target" is a map with kind, name and namespace', (node ?? keyNode) as Node);
  const target: Record<string, string> = {};
  for (const pair of node.items) {
    const key = (pair.key as { value?: unknown }).value;
    const value = (pair.value as { value?: unknown } | null)?.value;
    if (key !== 'kind' && key !== 'name' && key !== 'namespace')
      fail(`unknown key ${JSON.stringify(key)} in "target" (it has kind, name and namespace)`, pair.key as Node);
    if (typeof value !== 'string' || !(value === '*' || (key === 'kind' ? KIND : NAME).test(value))) {
      fail(`target ${String(key)} ${JSON.stringify(value)} is not a ${String(key)}`, (pair.value ?? pair.key) as Node);
    }
    target[key as string] = value as string;
  }
  return target;
}
