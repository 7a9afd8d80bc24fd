// The fast YAML reader's parts that need no reader state (fast-yaml.ts reads the block structure,
// fast-yaml-flow.ts one-line scalars and flow collections): the library's nodes built cheaply,
// plain scalars resolved as the library's YAML 1.1 schema resolves them, quoted text folded and
// unescaped, and "not in the subset" (UNSUPPORTED), which every part throws and fastParseDocument
// catches.
import { Document, isScalar, Pair, Scalar, YAMLMap, YAMLSeq, type Node } from 'yaml';

/** Thrown inside, caught at the top: "not in the subset this reader handles". */
class Unsupported extends Error {}
export const UNSUPPORTED = new Unsupported('outside the fast subset');

// The library tells nodes apart by a symbol property that its constructors set with
// defineProperty, one call per node; putting it on a prototype makes a node as cheap as an object.
const NODE_TYPE = Symbol.for('yaml.node.type');
function typedPrototype(base: { prototype: object }, type: string): object {
  const proto = Object.create(base.prototype) as object;
  Object.defineProperty(proto, NODE_TYPE, { value: Symbol.for(type) });
  return proto;
}
export const MAP_PROTO = typedPrototype(YAMLMap, 'yaml.map');
export const SEQ_PROTO = typedPrototype(YAMLSeq, 'yaml.seq');
const PAIR_PROTO = typedPrototype(Pair, 'yaml.pair');
const SCALAR_PROTO = typedPrototype(Scalar, 'yaml.scalar');

const OPTIONS = { version: '1.1', uniqueKeys: false } as const;
export const TEMPLATE = new Document(null, OPTIONS);
// Plain scalars resolve as the library's YAML 1.1 schema says (`yes`, `0777`, `12:30`, `~`).
type ScalarTagLike = {
  default?: boolean | 'key';
  test?: RegExp;
  resolve: (s: string, onError: (m: string) => void, o: unknown) => unknown;
};
const IMPLICIT = (TEMPLATE.schema.tags as unknown as ScalarTagLike[]).filter((t) => t.default === true && t.test);
const MAYBE_NOT_STRING = /^[-+.~0-9nNyYtTfFoO<]/;
const failResolve = () => {
  throw UNSUPPORTED;
};

export function resolvePlain(source: string): unknown {
  if (source === '') return null;
  if (!MAYBE_NOT_STRING.test(source)) return source;
  if (source === '<<') throw UNSUPPORTED;
  for (const tag of IMPLICIT) {
    if (tag.test!.test(source)) {
      const value = tag.resolve(source, failResolve, TEMPLATE.options);
      // null and booleans come back as Scalar nodes; the library keeps their value.
      if (isScalar(value)) return value.value;
      if (value !== null && typeof value === 'object') throw UNSUPPORTED;
      return value;
    }
  }
  return source;
}

/** Whether `source`, written as a plain scalar, reads back as that string in YAML 1.1. */
export function readsAsString(source: string): boolean {
  try {
    return resolvePlain(source) === source;
  } catch {
    return false;
  }
}

export function scalar(value: unknown, type: Scalar.Type, start: number, end: number, source: string): Scalar {
  const node = Object.create(SCALAR_PROTO) as Scalar;
  node.value = value;
  node.type = type;
  node.source = source;
  node.range = [start, end, end];
  return node;
}

export function pair(key: Scalar, value: Node | null): Pair {
  const node = Object.create(PAIR_PROTO) as Pair;
  node.key = key;
  node.value = value;
  return node;
}

export function collection<T extends YAMLMap | YAMLSeq>(proto: object, start: number, flow: boolean): T {
  const node = Object.create(proto) as T;
  node.items = [];
  node.range = [start, start, start];
  if (flow) node.flow = true;
  return node;
}

export const SPACE = 32;
export const TAB = 9;
export const NL = 10;
export const HASH = 35;
export const DASH = 45;
export const COLON = 58;

/**
 * YAML's line folding of a quoted scalar that spans lines: blanks around each line break go, one
 * break between two lines becomes a space, each empty line a line break. The last line keeps its
 * trailing blanks (they sit before the closing quote).
 */
export function foldQuoted(raw: string): string {
  const lines = raw.split('\n');
  const last = lines.length - 1;
  for (const line of lines) {
    // A document marker inside a quoted scalar is an error for go-yaml too.
    if (line.startsWith('---') || line.startsWith('...')) throw UNSUPPORTED;
  }
  let out = lines[0]!.replace(/[ \t]+$/, '');
  for (let i = 1; i <= last;) {
    let j = i;
    while (j < last && /^[ \t]*$/.test(lines[j]!)) j++;
    const empties = j - i;
    out += empties === 0 ? ' ' : '\n'.repeat(empties);
    out += j === last ? lines[j]!.replace(/^[ \t]+/, '') : lines[j]!.replace(/^[ \t]+|[ \t]+$/g, '');
    i = j + 1;
  }
  return out;
}

/** A line of a plain scalar holds no `: `, ` #` or final `:`, which would end it there. */
export function plainLineIsText(text: string): boolean {
  return !(
    text.includes(': ') ||
    text.includes(':\t') ||
    text.endsWith(':') ||
    text.includes(' #') ||
    text.includes('\t#')
  );
}

/** The escapes of one line of a double-quoted scalar: JSON's are a subset of YAML's; others are the library's. */
export function decodeEscapes(raw: string): string {
  if (/\\[^"/bfnrtu]/.test(raw.replaceAll('\\\\', '')) || /[\x00-\x1f]/.test(raw)) throw UNSUPPORTED;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    throw UNSUPPORTED;
  }
}

/** The end of the line holding `p` (its line break, or the text's end). */
export function lineEnd(s: string, p: number): number {
  const e = s.indexOf('\n', p);
  return e === -1 ? s.length : e;
}

/** A blank, a line break or the text's end at `p`: what ends an indicator (`- `, `: `). */
export function blankOrEnd(s: string, p: number): boolean {
  const c = s.charCodeAt(p);
  return Number.isNaN(c) || c === SPACE || c === NL || c === TAB;
}
