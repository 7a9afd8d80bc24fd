// Image references inside strings that are not `image:` fields: an operator's flag
// (`--prometheus-config-reloader=<ref>`, or the argument after `--some-image`), an env value
// (`AGENT_IMAGE=<ref>`), a line of ConfigMap data (`csi-attacher: <ref>`, `"image": "<ref>"`).
// A string of several words (a shell script passed as one argument, an env value listing
// `<version>=<ref>` lines, a config file) is read word by word and line by line: each
// `key: <ref>` line and each `name=<ref>` word (`-consul-dataplane-image="<ref>" \`,
// `4.2.0=<ref>`), under its own name. Operators start pods from these at run time, so they must
// be in the airgap bundle and point at the local registry like any `image:` field.
//
// Pure string logic, no YAML: the caller says what kind of string it is and hands the value; we
// return the character ranges of each reference inside it, so that only the reference is
// replaced and the rest of the string stays as it was.
//
// False positives cost more than misses here (a rewritten URL breaks a chart; a missed image is
// reported by the test of record and fixed with --image-path), so a candidate counts only when
// - it parses as a reference and holds no `://`, and
// - it names a registry host and has a slash and a tag or digest (`quay.io/x/y:v1`), or
// - what names it (flag, env var or key) says "image" and it has a tag, a digest or a host.
// A version string (`v1.2.3`), a `host:port`, a roleRef or a URL never passes; nor does a label
// (`app.kubernetes.io/component:template`: no registry lives under a Kubernetes label domain) or
// the value of an env var named `*_LABELS` or `*_SELECTOR`.
// Values that name only a registry or a registry namespace (`docker.elastic.co`,
// `docker.io/mongodb`) under a key that says registry/repo/hub are returned apart: operators build
// image names from them at run time; they can be reported, not rewritten.
// In ConfigMap data, apps also name OCI artifacts they pull at run time (plugins, rule bundles,
// charts) as list items (`- <ref>`, `refs: [<ref>, ...]`, a JSON array) or as `oci://<ref>`. An
// item counts only as a full reference: registry host, repository with a slash, tag or digest;
// `oci://` the same after the scheme. It is an artifact unless the key above the list says
// "image" (then an image); any other scheme (`https://...`) never counts.
import { namesTagOrDigest, parseImageReference, type ImageReference } from '../common/image-reference.js';
import { isOneLineJson, jsonStrings } from './json-strings.js';
import { findNameTagPairs } from './name-tag-pairs.js';

export type EmbeddedContext =
  /** One item of a container's `args` or `command`; `previous` is the item before it. */
  | { where: 'arg'; previous?: string }
  /** A container env var's `value`. */
  | { where: 'env'; name: string }
  /** A value of ConfigMap `data`, scanned line by line. */
  | { where: 'data'; key: string };

export interface EmbeddedReference {
  /** Character range of the reference inside the value. */
  start: number;
  end: number;
  reference: string;
  /** What names it: `--flag`, `env NAME`, `key` of a data line (for a list item, the list's key). */
  via: string;
  /** An OCI artifact the app pulls at run time (ConfigMap data only), not a container image. */
  artifact?: true;
  /**
   * The range holds only the name of `reference` (`<name>:<tag>`), whose tag sits in a key of its
   * own (name-tag-pairs.ts): rewritten to the local name without its tag.
   */
  nameOnly?: true;
  /** With nameOnly, for an image given as registry, repository and tag keys: which of the local name's two parts goes here. */
  part?: NamePart;
}

/** The local name's address (`<registry>` key) or its last component (`<repository>` key). */
export type NamePart = 'registry' | 'repository';

export interface EmbeddedFindings {
  images: EmbeddedReference[];
  /** Registry-only values (no image name): `start`/`end`/`reference` hold the value. */
  registries: EmbeddedReference[];
}

const IMAGE_HINT = /image/i;
const REGISTRY_HINT = /regist|repo|hub|mirror/i;
// `key: value`, `key=value`, `"key": "value",` on one line (YAML, properties, JSON).
const DATA_LINE = /^(\s*(?:-\s+)?)(["']?)([A-Za-z0-9_.\-/]+)\2(\s*[:=]\s*)(["']?)([^\s"',]+)\5\s*,?\s*$/;
const DOMAIN_LIKE = /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?$/i;

export function findEmbeddedReferences(value: string, context: EmbeddedContext): EmbeddedFindings {
  const found: EmbeddedFindings = { images: [], registries: [] };
  const consider = (candidate: string, start: number, hint: string, via: string) => {
    if (candidate === '') return;
    if (isEmbeddedImage(candidate, hint))
      found.images.push({ start, end: start + candidate.length, reference: candidate, via });
    else if (isRegistryOnly(candidate, hint))
      found.registries.push({ start, end: start + candidate.length, reference: candidate, via });
  };

  // ConfigMap data: an `oci://` reference is an artifact (its scheme is cut off, the reference
  // after it is what the registry holds); list items are read below.
  const considerData = (candidate: string, start: number, hint: string, via: string) => {
    if (!candidate.startsWith(OCI_SCHEME)) return consider(candidate, start, hint, via);
    const reference = candidate.slice(OCI_SCHEME.length);
    const at = start + OCI_SCHEME.length;
    if (isFullReference(reference))
      found.images.push({ start: at, end: at + reference.length, reference, via, artifact: true });
  };

  if (context.where === 'env' && LABEL_SETTING_NAME.test(context.name)) return found; // labels or a selector: never an image
  if (context.where === 'data' && value === '' && isEmptyRegistryDataKey(context.key)) {
    found.registries.push({ start: 0, end: 0, reference: '', via: context.key });
    return found;
  }
  if (context.where === 'data' && (isOneLineJson(value) || /\s/.test(value.trim()))) {
    scanData(value, context.key, found, considerData);
    return found;
  }
  // Several words: lines and words, whatever the context.
  if (/\s/.test(value.trim())) {
    scanWords(value, consider);
    return found;
  }
  if (context.where === 'arg') {
    const flag = /^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)=(.*)$/.exec(value);
    if (flag) {
      consider(flag[2]!, flag[1]!.length + 1, flag[1]!, flag[1]!);
      return found;
    }
    if (value.startsWith('-')) return found;
    const previous =
      context.previous !== undefined && /^--?[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(context.previous)
        ? context.previous
        : undefined;
    consider(value, 0, previous ?? '', previous ?? 'argument');
    return found;
  }
  if (context.where === 'env') {
    if (value === '' && isEmptyRegistrySetting(context.name))
      found.registries.push({ start: 0, end: 0, reference: '', via: `env ${context.name}` });
    else consider(value, 0, context.name, `env ${context.name}`);
    return found;
  }
  // ConfigMap data of one token: the whole value, under its key.
  const offset = value.indexOf(value.trim());
  considerData(value.trim(), offset, context.key, context.key);
  return found;
}

const OCI_SCHEME = 'oci://';

type Consider = (candidate: string, start: number, hint: string, via: string) => void;

/**
 * Data of several words (a values file, a config, JSON): an image as a name key and a tag key
 * first (the pair wins over what its name's line says alone: an untagged image, a registry-only
 * `repository`); then JSON on one line (a template's `toJson`) string by string under its keys,
 * or else each line and word, and the list items left.
 */
function scanData(value: string, key: string, found: EmbeddedFindings, considerData: Consider): void {
  const pairs = findNameTagPairs(value);
  const paired = new Set(pairs.flatMap((p) => (p.registry ? [p.start, p.registry.start] : [p.start])));
  for (const p of pairs) {
    if (!p.registry)
      found.images.push({ start: p.start, end: p.end, reference: p.reference, via: p.via, nameOnly: true });
    else {
      found.images.push({
        start: p.registry.start,
        end: p.registry.end,
        reference: p.reference,
        via: p.registry.via,
        nameOnly: true,
        part: 'registry',
      });
      found.images.push({
        start: p.start,
        end: p.end,
        reference: p.reference,
        via: p.via,
        nameOnly: true,
        part: 'repository',
      });
    }
  }
  if (isOneLineJson(value)) {
    for (const s of jsonStrings(value)) if (!paired.has(s.start)) considerData(s.value, s.start, s.key, s.key || key);
    return;
  }
  const taken = scanWords(value, (candidate, start, hint, via) => {
    if (!paired.has(start)) considerData(candidate, start, hint, via);
  });
  for (const start of paired) taken.add(start);
  for (const item of listItems(value)) {
    if (taken.has(item.start)) continue;
    taken.add(item.start);
    const oci = item.candidate.startsWith(OCI_SCHEME);
    if (!isFullReference(oci ? item.candidate.slice(OCI_SCHEME.length) : item.candidate)) continue;
    const listKey = item.key(); // looked up only for a reference: a JSON array of 10k strings is not walked 10k times
    if (oci) considerData(item.candidate, item.start, '', listKey || key);
    else
      found.images.push({
        start: item.start,
        end: item.start + item.candidate.length,
        reference: item.candidate,
        via: listKey || key,
        ...(IMAGE_HINT.test(listKey) ? {} : { artifact: true as const }),
      });
  }
}

/** A reference that names everything itself: registry host, a repository with a slash, a tag or digest. */
function isFullReference(candidate: string): boolean {
  return hasExplicitHost(candidate) && hasExplicitTagOrDigest(candidate) && parseCandidate(candidate) !== undefined;
}

// A YAML block list item `- <value>` (quoted or not, a comment after it), a JSON array element
// alone on its line (`"<value>",`), and the items of a `[a, "b"]` list on one line.
const BLOCK_ITEM = /^([ \t]*)-[ \t]+(["']?)([^\s"'#,[\]{}]+)\2[ \t\r]*(?:#.*)?$/d;
const ARRAY_ELEMENT = /^([ \t]*)(["'])([^\s"'[\]{}]+)\2[ \t]*,?[ \t\r]*$/d;
const FLOW_LIST = /\[([^[\]]*)\]/dg;
const FLOW_ITEM = /(["']?)([^\s,"'[\]{}]+)\1/dg;
// The key a list hangs from: `key:` (`- key:`, `"key":`) ending its line, or `key: [` / `"key": [`.
const LIST_KEY = /^[ \t]*(?:-[ \t]+)?(["']?)([A-Za-z0-9_.\-/]+)\1[ \t]*:[ \t]*$/;
const ARRAY_KEY = /(["']?)([A-Za-z0-9_.\-/]+)\1[ \t]*[:=][ \t]*\[[ \t]*$/;
const FLOW_KEY = /(["']?)([A-Za-z0-9_.\-/]+)\1[ \t]*[:=][ \t]*$/;

/** The list items of a text (YAML block and flow lists, JSON arrays), each with the key of its list ('' when none). */
function listItems(value: string): { candidate: string; start: number; key: () => string }[] {
  const items: { candidate: string; start: number; key: () => string }[] = [];
  const lines = value.split('\n');
  let lineStart = 0;
  lines.forEach((line, i) => {
    // A full reference holds a `/`: most lines of a large config (a dashboard's JSON) have none.
    if (!line.includes('/')) {
      lineStart += line.length + 1;
      return;
    }
    const block = BLOCK_ITEM.exec(line);
    const element = block ? undefined : ARRAY_ELEMENT.exec(line);
    const m = block ?? element;
    if (m) {
      const indent = m[1]!.length;
      items.push({
        candidate: m[3]!,
        start: lineStart + m.indices![3]![0],
        key: () => listKeyAbove(lines, i, indent, block ? 'block' : 'array'),
      });
    }
    for (const list of line.matchAll(FLOW_LIST)) {
      const key = () => FLOW_KEY.exec(line.slice(0, list.index))?.[2] ?? '';
      const innerStart = list.indices![1]![0];
      for (const item of list[1]!.matchAll(FLOW_ITEM))
        items.push({ candidate: item[2]!, start: lineStart + innerStart + item.indices![2]![0], key });
    }
    lineStart += line.length + 1;
  });
  return items;
}

/**
 * The key a list item hangs from: for a block item, the nearest line above at its indentation or
 * less that is not an item of the same list (`key:`, or the list is keyless); for a JSON element,
 * the nearest line above with less indentation (`"key": [`).
 */
function listKeyAbove(lines: string[], index: number, indent: number, kind: 'block' | 'array'): string {
  for (let i = index - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (/^[ \t]*(?:#.*)?$/.test(line)) continue;
    const lineIndent = /^[ \t]*/.exec(line)![0].length;
    if (kind === 'block') {
      if (lineIndent > indent || (lineIndent === indent && /^[ \t]*-(?:[ \t]|$)/.test(line))) continue;
      return LIST_KEY.exec(line)?.[2] ?? '';
    }
    if (lineIndent >= indent) continue;
    return ARRAY_KEY.exec(line)?.[2] ?? '';
  }
  return '';
}

// `name=<ref>` as a word of its own: a flag (`--a-image=<ref>`, `-a-image="<ref>"`) or a
// variable or key (`AGENT_IMAGE=<ref>`, `4.2.0=<ref>`), the reference quoted or not, then the
// end of the word (a blank, `;`, `,`, `)`, or a shell line's `\`).
const WORD = /(^|[\s;(])(-{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*)=(["']?)([A-Za-z0-9._\-/:@+]+)\3(?=$|[\s;,)\\])/g;

/** Each `key: <ref>` line and each `name=<ref>` word of a string, every place taken once; returns the places taken. */
function scanWords(
  value: string,
  consider: (candidate: string, start: number, hint: string, via: string) => void,
): Set<number> {
  const taken = new Set<number>();
  const take = (candidate: string, start: number, name: string) => {
    if (taken.has(start)) return;
    taken.add(start);
    consider(candidate, start, name, name);
  };
  let lineStart = 0;
  for (const line of value.split('\n')) {
    const m = DATA_LINE.exec(line);
    if (m) {
      const [, lead = '', quote = '', key = '', separator = '', valueQuote = '', candidate = ''] = m;
      take(
        candidate,
        lineStart + lead.length + quote.length * 2 + key.length + separator.length + valueQuote.length,
        key,
      );
    }
    lineStart += line.length + 1;
  }
  for (const m of value.matchAll(WORD)) {
    const [, before = '', name = '', quote = '', candidate = ''] = m;
    take(candidate, m.index + before.length + name.length + 1 + quote.length, name);
  }
  return taken;
}

/** Is this string, found under `hint`, an image reference (see the file comment)? */
export function isEmbeddedImage(candidate: string, hint: string): boolean {
  const ref = parseCandidate(candidate);
  if (!ref) return false;
  const hasHost = hasExplicitHost(candidate);
  const pinned = hasExplicitTagOrDigest(candidate);
  if (hasHost && pinned && candidate.includes('/')) return true;
  return IMAGE_HINT.test(hint) && (pinned || (hasHost && candidate.includes('/')));
}

/**
 * Does this value, found under `hint`, name only a registry or a registry namespace (see the file
 * comment)? Only the last component of a dotted key says what it is: in a Python setting
 * `c.JupyterHub.spawner_class = kubespawner.KubeSpawner` the setting is `spawner_class`, and
 * `JupyterHub` (a "hub") is the object it belongs to. A registry's host is written in lower case:
 * `kubespawner.KubeSpawner` is a class, not a host.
 */
export function isRegistryOnly(candidate: string, hint: string): boolean {
  if (!REGISTRY_HINT.test(lastKeyComponent(hint)) || candidate.includes('://') || hasExplicitTagOrDigest(candidate))
    return false;
  const [host = '', ...path] = candidate.replace(/\/+$/, '').split('/');
  if (host !== host.toLowerCase()) return false;
  if (!DOMAIN_LIKE.test(host) || (!host.includes('.') && !host.includes(':') && host !== 'localhost')) return false;
  return path.every((component) => /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(component));
}

// Env vars that hold labels or a label selector (a chaos-engineering operator's
// `TEMPLATE_LABELS=app.kubernetes.io/component:template`, `CONFIGMAP_LABELS`, `*_SELECTOR`): what
// they hold reads like `<host>/<name>:<tag>`, and rewritten, the operator's filter matches nothing.
const LABEL_SETTING_NAME = /(?:^|_)(?:LABELS?|SELECTORS?)$/i;
// The label domains Kubernetes reserves (`app.kubernetes.io/component`, `node-role.kubernetes.io/x`):
// no registry lives under them, so `<label key>:<value>` is never an image.
const LABEL_DOMAIN = /^(?:[a-z0-9-]+\.)*kubernetes\.io\//i;

/** A label key and value (`app.kubernetes.io/component:template`), not a reference. */
function isLabelKeyed(candidate: string): boolean {
  return LABEL_DOMAIN.test(candidate);
}

function lastKeyComponent(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1);
}

// An env var that names the registry a workload pulls images from at run time (a data-integration
// app's connectors: `CONNECTOR_IMAGE_REGISTRY`, `JOB_DOCKER_REGISTRY`). Set to "", the app falls
// back to its built-in default (Docker Hub) at run time, which an airgapped cluster cannot reach:
// reported like a registry-only value, never rewritten (there is nothing to rewrite).
const EMPTY_REGISTRY_NAME = /(?:^|_)REGISTRY(?:_(?:URL|HOST|ADDRESS|PREFIX|SERVER))?$/i;

/** Is an env var of this name, set to "", a registry left to the workload's default? */
function isEmptyRegistrySetting(name: string): boolean {
  return EMPTY_REGISTRY_NAME.test(name);
}

// The same setting as a key of ConfigMap (or Secret) data that the workload reads as an env var
// (`envFrom`, `configMapKeyRef`): a data-integration chart keeps its env in a ConfigMap,
// `JOB_KUBE_CONNECTOR_IMAGE_REGISTRY: ""`. Only an env-style key (upper case, `_`) counts: a
// lower-case `registry` key is some file's setting, not a variable the workload pulls with.
const ENV_STYLE_KEY = /^[A-Z][A-Z0-9_]*$/;

function isEmptyRegistryDataKey(key: string): boolean {
  return ENV_STYLE_KEY.test(key) && isEmptyRegistrySetting(key);
}

// Every character a reference can hold: anything else is refused here, before parseImageReference
// would build (and throw) an error for it; most strings scanned are not references at all.
const REFERENCE_CHARS = /^[A-Za-z0-9._\-/:@+]+$/;

function parseCandidate(candidate: string): ImageReference | undefined {
  if (!REFERENCE_CHARS.test(candidate) || isLabelKeyed(candidate)) return undefined;
  if (candidate.includes('://') || candidate.startsWith('/') || candidate.endsWith('/')) return undefined;
  try {
    return parseImageReference(candidate);
  } catch {
    return undefined;
  }
}

function hasExplicitHost(candidate: string): boolean {
  const slash = candidate.indexOf('/');
  if (slash === -1) return false;
  const first = candidate.slice(0, slash);
  return first === 'localhost' || ((first.includes('.') || first.includes(':')) && DOMAIN_LIKE.test(first));
}

function hasExplicitTagOrDigest(candidate: string): boolean {
  return namesTagOrDigest(candidate);
}
